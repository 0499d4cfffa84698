//! Raft's AppendEntries and Vote over one persistent connection per peer.
//!
//! The connection starts as HTTP/1.1 on the node's one address:
//! `GET /raft/stream` with `Connection: Upgrade` and `Upgrade: sievedb-raft`,
//! answered `101 Switching Protocols`. After that it carries frames, each a
//! `u32` little-endian length and that many bytes of postcard:
//!
//! ```text
//! request:  u32 len, postcard Rpc            (Append or Vote)
//! response: u32 len, postcard Result<AppendEntriesResponse | VoteResponse, RaftError>
//! ```
//!
//! The server answers the requests of a connection one at a time, in order.
//! A frame longer than [`MAX_FRAME`], a truncated one or one that does not
//! decode closes the connection. The sender ([`Conn`], owned by a
//! [`super::raft::Peer`]) sends one request and reads its answer before the
//! next, so no request ids are needed.

use std::io;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use openraft::raft::{AppendEntriesRequest, VoteRequest};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::error;
use crate::app::App;
use crate::types::{NodeId, Raft, TypeConfig};

/// The path of the upgrade request.
pub const PATH: &str = "/raft/stream";
/// The protocol named in `Upgrade:`.
pub const PROTOCOL: &str = "sievedb-raft";
/// The longest frame either side accepts (bytes after the length).
pub const MAX_FRAME: usize = 256 << 20;
/// The longest `101` answer head the sender reads.
const MAX_HEAD: usize = 16 << 10;

/// A request on the stream.
#[derive(Debug, Serialize, Deserialize)]
pub enum Rpc {
    /// An AppendEntries (heartbeats included).
    Append(AppendEntriesRequest<TypeConfig>),
    /// A RequestVote.
    Vote(VoteRequest<NodeId>),
}

fn invalid(msg: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// `v` as one frame: its length and its postcard bytes.
pub fn encode_frame<T: Serialize>(v: &T) -> io::Result<Vec<u8>> {
    let frame = postcard::to_extend(v, vec![0u8; 4]).map_err(invalid)?;
    let len = frame.len() - 4;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a {len}-byte frame is over the {MAX_FRAME}-byte limit"),
        ));
    }
    let mut frame = frame;
    // In range: len <= MAX_FRAME < u32::MAX.
    frame[..4].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(frame)
}

/// Reads the bytes of one frame: `None` when the stream ends cleanly before
/// it; an error when it ends inside it or its length is over [`MAX_FRAME`].
pub async fn read_frame_bytes<R: AsyncRead + Unpin>(r: &mut R) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    let mut have = 0;
    while have < 4 {
        let n = r.read(&mut len[have..]).await?;
        if n == 0 {
            if have == 0 {
                return Ok(None);
            }
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the stream ended inside a frame's length",
            ));
        }
        have += n;
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(invalid(format!(
            "a {len}-byte frame is over the {MAX_FRAME}-byte limit"
        )));
    }
    // Grown as bytes arrive, so that a bogus length costs no large buffer.
    let mut body = Vec::with_capacity(len.min(64 << 10));
    (&mut *r).take(len as u64).read_to_end(&mut body).await?;
    if body.len() < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the stream ended {} bytes into a {len}-byte frame",
                body.len()
            ),
        ));
    }
    Ok(Some(body))
}

/// Reads and decodes one frame (see [`read_frame_bytes`]); a frame that
/// does not decode as `T` is an `InvalidData` error.
pub async fn read_frame<R: AsyncRead + Unpin, T: DeserializeOwned>(
    r: &mut R,
) -> io::Result<Option<T>> {
    match read_frame_bytes(r).await? {
        None => Ok(None),
        Some(b) => postcard::from_bytes(&b).map(Some).map_err(invalid),
    }
}

// ---------------------------------------------------------------- server --

fn header_has(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .map(|s| s.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
            .unwrap_or(false)
    })
}

/// `GET /raft/stream`: switches the connection to Raft frames and serves
/// them until the sender closes it, a frame is malformed or the node stops.
pub async fn upgrade(State(app): State<Arc<App>>, mut req: Request) -> Response {
    let headers = req.headers();
    if !header_has(headers, header::CONNECTION, "upgrade")
        || !header_has(headers, header::UPGRADE, PROTOCOL)
    {
        return error(
            StatusCode::BAD_REQUEST,
            format!("{PATH} needs `Connection: Upgrade` and `Upgrade: {PROTOCOL}`"),
        );
    }
    let on_upgrade = hyper::upgrade::on(&mut req);
    let raft = app.raft.clone();
    let stopped = app.stopped.clone();
    drop(app);
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(upgraded) => {
                if let Err(e) = serve(raft, stopped, TokioIo::new(upgraded)).await {
                    tracing::debug!(error = %e, "raft stream closed");
                }
            }
            Err(e) => tracing::debug!(error = %e, "raft stream upgrade failed"),
        }
    });
    let mut resp = Body::empty().into_response();
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = resp.headers_mut();
    h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(header::UPGRADE, HeaderValue::from_static(PROTOCOL));
    resp
}

/// Answers the frames of one upgraded connection, in order.
async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    raft: Raft,
    mut stopped: tokio::sync::watch::Receiver<bool>,
    io: S,
) -> io::Result<()> {
    let mut io = BufReader::new(io);
    loop {
        let rpc: Rpc = tokio::select! {
            r = read_frame(&mut io) => match r? {
                Some(rpc) => rpc,
                None => return Ok(()),
            },
            _ = stopped.wait_for(|s| *s) => return Ok(()),
        };
        let frame = match rpc {
            Rpc::Append(req) => encode_frame(&raft.append_entries(req).await)?,
            Rpc::Vote(req) => encode_frame(&raft.vote(req).await)?,
        };
        io.write_all(&frame).await?;
        io.flush().await?;
    }
}

// ---------------------------------------------------------------- sender --

/// One upgraded connection to a node, as its sender holds it.
#[derive(Debug)]
pub struct Conn {
    io: BufReader<TcpStream>,
}

impl Conn {
    /// Connects to `addr` (`host:port`) and upgrades the connection.
    pub async fn connect(addr: &str) -> io::Result<Conn> {
        let tcp = TcpStream::connect(addr).await?;
        tcp.set_nodelay(true)?;
        let mut io = BufReader::new(tcp);
        let head = format!(
            "GET {PATH} HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: {PROTOCOL}\r\n\r\n"
        );
        io.write_all(head.as_bytes()).await?;
        let mut status = Vec::new();
        let mut read = 0;
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut io)
                .take((MAX_HEAD - read) as u64)
                .read_until(b'\n', &mut line)
                .await?;
            read += n;
            if n == 0 || !line.ends_with(b"\n") {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{addr} closed (or sent over {MAX_HEAD} bytes) before answering the upgrade"),
                ));
            }
            if status.is_empty() {
                status = line.clone();
            } else if line == b"\r\n" || line == b"\n" {
                break;
            }
        }
        // "HTTP/1.1 101 Switching Protocols"
        let code = status.split(|b| *b == b' ').nth(1);
        if code != Some(b"101".as_slice()) {
            return Err(io::Error::other(format!(
                "{addr} answered the upgrade with {:?}",
                String::from_utf8_lossy(&status).trim_end()
            )));
        }
        // The server sends nothing after its `101` before a request, so
        // nothing of a frame can be in the buffer yet.
        Ok(Conn { io })
    }

    /// Sends one encoded request frame and reads the answer's bytes.
    pub async fn exchange(&mut self, frame: &[u8]) -> io::Result<Vec<u8>> {
        self.io.get_mut().write_all(frame).await?;
        match read_frame_bytes(&mut self.io).await? {
            Some(b) => Ok(b),
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the connection closed before the answer",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_from(bytes: &[u8]) -> io::Result<Option<Vec<u8>>> {
        let mut r = bytes;
        read_frame_bytes(&mut r).await
    }

    #[tokio::test]
    async fn frames_round_trip() {
        let vote = Rpc::Vote(VoteRequest::new(openraft::Vote::new(3, 2), None));
        let frame = encode_frame(&vote).expect("encode");
        assert_eq!(
            u32::from_le_bytes(frame[..4].try_into().expect("4 bytes")) as usize,
            frame.len() - 4
        );
        // Two frames back to back, then a clean end.
        let mut two = frame.clone();
        two.extend_from_slice(&frame);
        let mut r = two.as_slice();
        for _ in 0..2 {
            let back: Rpc = read_frame(&mut r).await.expect("read").expect("a frame");
            match back {
                Rpc::Vote(v) => assert_eq!(v.vote, openraft::Vote::new(3, 2)),
                Rpc::Append(_) => panic!("decoded as an append"),
            }
        }
        assert!(read_frame::<_, Rpc>(&mut r).await.expect("eof").is_none());
    }

    #[tokio::test]
    async fn truncated_frames_are_errors() {
        let frame = encode_frame(&Rpc::Vote(VoteRequest::new(
            openraft::Vote::new(1, 1),
            None,
        )))
        .expect("encode");
        assert!(read_from(&[]).await.expect("clean end").is_none());
        for cut in 1..frame.len() {
            let e = read_from(&frame[..cut]).await.expect_err("truncated");
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}");
        }
    }

    #[tokio::test]
    async fn oversized_and_garbage_frames_are_errors() {
        let mut big = ((MAX_FRAME + 1) as u32).to_le_bytes().to_vec();
        big.extend_from_slice(&[0; 16]);
        let e = read_from(&big).await.expect_err("oversized");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        // u32::MAX as a length: refused before anything is allocated.
        let e = read_from(&[0xff; 8]).await.expect_err("oversized");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        // A well-framed body that is no Rpc (variant 7 does not exist).
        let mut r: &[u8] = &[3, 0, 0, 0, 7, 1, 2];
        let e = read_frame::<_, Rpc>(&mut r).await.expect_err("garbage");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }
}
