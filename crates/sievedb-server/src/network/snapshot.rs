//! Streaming a snapshot (a checkpoint directory) to a follower: one
//! `POST /raft/snapshot` whose body is produced and consumed a chunk at a
//! time, so neither side holds the snapshot in memory.
//!
//! Body layout (integers little-endian):
//! ```text
//! u32 header length, header (JSON: [vote, snapshot meta])
//! per file:  u16 name length (> 0), name (a plain file name, UTF-8)
//!            u64 size, `size` bytes, u32 CRC-32C of those bytes
//! u16 0      (end)
//! ```
//! The receiver writes each file into `incoming/<n>/`, checks its CRC, syncs
//! the files and the directory, then hands the directory to openraft
//! (`Raft::install_full_snapshot`), which installs it through the state
//! machine (`store::snapshot::install`). The answer is postcard
//! `Result<SnapshotResponse, String>`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::{Buf, BytesMut};
use futures_util::StreamExt;
use openraft::error::{Fatal, NetworkError, StreamingError, Unreachable};
use openraft::raft::{AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse};
use openraft::{Snapshot, Vote};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::error;
use crate::app::App;
use crate::store::snapshot::{self as store_snapshot, Meta};
use crate::store::{decode, encode};
use crate::types::{NodeId, SnapshotDir, TypeConfig};

/// Bytes read from a file per chunk of the body.
const CHUNK: usize = 1 << 20;

type Streaming = StreamingError<TypeConfig, Fatal<NodeId>>;

fn net_err(msg: impl std::fmt::Display) -> Streaming {
    StreamingError::Network(NetworkError::new(&std::io::Error::other(msg.to_string())))
}

/// Sends `snapshot` to the node at `addr`.
pub async fn send(
    http: &reqwest::Client,
    addr: &str,
    target: NodeId,
    vote: Vote<NodeId>,
    snapshot: Snapshot<TypeConfig>,
) -> Result<SnapshotResponse<NodeId>, Streaming> {
    let header = serde_json::to_vec(&(vote, &snapshot.meta)).map_err(net_err)?;
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(4);
    let dir = snapshot.snapshot.path.clone();
    tokio::task::spawn_blocking(move || {
        if let Err(e) = produce(&dir, header, &tx) {
            let _ = tx.blocking_send(Err(e));
        }
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    tracing::info!(target, snapshot = %snapshot.meta.snapshot_id, "sending snapshot");
    let resp = http
        .post(format!("http://{addr}/raft/snapshot"))
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await
        .map_err(|e| {
            if e.is_connect() {
                StreamingError::Unreachable(Unreachable::new(&e))
            } else {
                StreamingError::Network(NetworkError::new(&e))
            }
        })?;
    let status = resp.status();
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| StreamingError::Network(NetworkError::new(&e)))?;
    if !status.is_success() {
        return Err(net_err(format!(
            "{addr} refused the snapshot ({status}): {}",
            String::from_utf8_lossy(&bytes)
        )));
    }
    let answer: Result<SnapshotResponse<NodeId>, String> = decode(&bytes).map_err(net_err)?;
    answer.map_err(|e| net_err(format!("{addr} could not install the snapshot: {e}")))
}

/// Writes the body of `dir`'s snapshot into `tx`, on one blocking thread for
/// the whole transfer (`tokio::fs` reads each chunk on whichever pool thread
/// is free, and each such thread's allocations may stay in its own malloc
/// arena).
fn produce(
    dir: &Path,
    header: Vec<u8>,
    tx: &mpsc::Sender<std::io::Result<Bytes>>,
) -> std::io::Result<()> {
    let send = |b: Bytes| {
        tx.blocking_send(Ok(b))
            .map_err(|_| std::io::Error::other("the snapshot request was dropped"))
    };
    let len = u32::try_from(header.len()).map_err(std::io::Error::other)?;
    let mut first = len.to_le_bytes().to_vec();
    first.extend_from_slice(&header);
    send(first.into())?;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    for name in names {
        let mut file = std::fs::File::open(dir.join(&name))?;
        let size = file.metadata()?.len();
        let name_len = u16::try_from(name.len()).map_err(std::io::Error::other)?;
        let mut head = name_len.to_le_bytes().to_vec();
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(&size.to_le_bytes());
        send(head.into())?;
        let mut crc = 0u32;
        let mut left = size;
        while left > 0 {
            let want = usize::try_from(left.min(CHUNK as u64)).map_err(std::io::Error::other)?;
            let mut buf = vec![0u8; want];
            std::io::Read::read_exact(&mut file, &mut buf)?;
            crc = crc32c::crc32c_append(crc, &buf);
            left -= want as u64;
            send(buf.into())?;
        }
        send(Bytes::copy_from_slice(&crc.to_le_bytes()))?;
    }
    send(Bytes::from_static(&[0, 0]))
}

/// The receiving end of a body: buffers what the parser needs next.
struct Reader {
    stream: axum::body::BodyDataStream,
    buf: BytesMut,
    /// Told of every chunk that arrives.
    progress: Arc<Progress>,
}

impl Reader {
    /// Ensures `n` bytes are buffered.
    async fn need(&mut self, n: usize) -> Result<(), String> {
        while self.buf.len() < n {
            *self.progress.waiting_since.lock() = Some(Instant::now());
            let next = self.stream.next().await;
            *self.progress.waiting_since.lock() = None;
            match next {
                Some(Ok(b)) => self.buf.extend_from_slice(&b),
                Some(Err(e)) => return Err(format!("reading the snapshot: {e}")),
                None => return Err("the snapshot stream ended early".into()),
            }
        }
        Ok(())
    }

    async fn u16(&mut self) -> Result<u16, String> {
        self.need(2).await?;
        Ok(self.buf.get_u16_le())
    }

    async fn u32(&mut self) -> Result<u32, String> {
        self.need(4).await?;
        Ok(self.buf.get_u32_le())
    }

    async fn u64(&mut self) -> Result<u64, String> {
        self.need(8).await?;
        Ok(self.buf.get_u64_le())
    }

    async fn bytes(&mut self, n: usize) -> Result<Bytes, String> {
        self.need(n).await?;
        Ok(self.buf.split_to(n).freeze())
    }

    /// Copies the next `size` bytes into `file`; their CRC-32C.
    async fn copy_to(&mut self, file: &mut tokio::fs::File, size: u64) -> Result<u32, String> {
        let mut crc = 0u32;
        let mut left = size;
        while left > 0 {
            if self.buf.is_empty() {
                self.need(1).await?;
            }
            let take = usize::try_from(left).map_or(self.buf.len(), |l| l.min(self.buf.len()));
            let chunk = self.buf.split_to(take);
            crc = crc32c::crc32c_append(crc, &chunk);
            file.write_all(&chunk)
                .await
                .map_err(|e| format!("writing the snapshot: {e}"))?;
            left -= take as u64;
        }
        Ok(crc)
    }
}

/// A file name a snapshot may carry: one plain component.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

/// How a transfer is going, for [`renew_lease`].
struct Progress {
    /// Since when the receiver has been waiting for the sender's next
    /// chunk; `None` while it writes, syncs or installs what it has. Only
    /// the sender's silence ends the lease: this node's own slow disk does
    /// not (a 48 MiB file's fsync on a busy machine outlasts an election
    /// timeout, and an election then would depose a live leader).
    waiting_since: parking_lot::Mutex<Option<Instant>>,
}

/// Renews the sender's leader lease on this node while its snapshot
/// streams in and installs.
///
/// openraft queues the leader's heartbeats to a follower behind the
/// snapshot it is sending it, so without this the follower's election timer
/// fires mid-transfer: it campaigns, its higher term deposes the leader (the
/// cluster stops serving while it elects), and the transfer starts over: a
/// snapshot that takes longer than an election timeout to send and install
/// never gets installed. Every `every`, unless this node has waited for the
/// sender's next chunk for `stale_after` or longer, this hands Raft what the
/// leader's heartbeat would carry: an `AppendEntries` of the sender's vote
/// with no entries, no previous log id and no commit index, which renews the
/// lease and changes neither the log nor the commit index. It stops at the
/// first answer other than success (a higher vote here, Raft stopped);
/// dropping it (the transfer ended) aborts the heartbeats still unanswered.
async fn renew_lease(
    raft: crate::types::Raft,
    vote: Vote<NodeId>,
    progress: Arc<Progress>,
    every: Duration,
    stale_after: Duration,
) {
    let mut tick = tokio::time::interval(every);
    // Raft renews the lease when it handles a heartbeat, but answers it
    // only after the commands queued before it: during the install, after
    // the install itself. So heartbeats are not sent one answer at a time
    // (one would wait out the whole install, the lease lapsing behind it);
    // each is its own task, and the answers are checked as they come.
    let mut sent = tokio::task::JoinSet::new();
    loop {
        tick.tick().await;
        while let Some(answer) = sent.try_join_next() {
            if !matches!(answer, Ok(Ok(AppendEntriesResponse::Success))) {
                return;
            }
        }
        let alive = progress
            .waiting_since
            .lock()
            .is_none_or(|since| since.elapsed() < stale_after);
        if !alive {
            continue;
        }
        let heartbeat = AppendEntriesRequest {
            vote,
            prev_log_id: None,
            leader_commit: None,
            entries: Vec::new(),
        };
        let raft = raft.clone();
        sent.spawn(async move { raft.append_entries(heartbeat).await });
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reads the header of the body: the sender's vote and the snapshot's
/// metadata.
async fn read_header(r: &mut Reader) -> Result<(Vote<NodeId>, Meta), String> {
    let len = r.u32().await? as usize;
    let header = r.bytes(len).await?;
    serde_json::from_slice(&header).map_err(|e| format!("bad snapshot header: {e}"))
}

/// Reads the files of the body into `dir`.
async fn read_files(r: &mut Reader, dir: &Path) -> Result<(), String> {
    loop {
        let name_len = r.u16().await? as usize;
        if name_len == 0 {
            break;
        }
        let name = String::from_utf8(r.bytes(name_len).await?.to_vec())
            .map_err(|_| "a snapshot file name is not UTF-8".to_string())?;
        if !valid_name(&name) {
            return Err(format!("bad snapshot file name {name:?}"));
        }
        let size = r.u64().await?;
        let path = dir.join(&name);
        let mut file = tokio::fs::File::create(&path)
            .await
            .map_err(|e| format!("creating {}: {e}", path.display()))?;
        let crc = r.copy_to(&mut file, size).await?;
        let want = r.u32().await?;
        if crc != want {
            return Err(format!(
                "snapshot file {name}: CRC-32C {crc:08x}, the sender's {want:08x}"
            ));
        }
        file.sync_all()
            .await
            .map_err(|e| format!("syncing {}: {e}", path.display()))?;
    }
    let d = dir.to_path_buf();
    tokio::task::spawn_blocking(move || std::fs::File::open(&d)?.sync_all())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("syncing {}: {e}", dir.display()))?;
    Ok(())
}

/// `POST /raft/snapshot`.
pub async fn receive(State(app): State<Arc<App>>, body: Body) -> Response {
    let dir: PathBuf = match store_snapshot::incoming(&app.store) {
        Ok(d) => d,
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("no room for a snapshot: {e}"),
            )
        }
    };
    let progress = Arc::new(Progress {
        waiting_since: parking_lot::Mutex::new(None),
    });
    let mut reader = Reader {
        stream: body.into_data_stream(),
        buf: BytesMut::new(),
        progress: progress.clone(),
    };
    let received = async {
        let (vote, meta) = read_header(&mut reader).await?;
        let lease = AbortOnDrop(tokio::spawn(renew_lease(
            app.raft.clone(),
            vote,
            progress.clone(),
            app.opts.heartbeat,
            app.opts.election_timeout.0,
        )));
        read_files(&mut reader, &dir).await?;
        Ok::<_, String>((vote, meta, lease))
    };
    let (vote, meta, _lease) = match received.await {
        Ok(x) => x,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            tracing::warn!("snapshot refused: {e}");
            return error(StatusCode::BAD_REQUEST, e);
        }
    };
    tracing::info!(snapshot = %meta.snapshot_id, "snapshot received; installing");
    let snapshot = Snapshot {
        meta,
        snapshot: Box::new(SnapshotDir { path: dir.clone() }),
    };
    let answer: Result<SnapshotResponse<NodeId>, String> = app
        .raft
        .install_full_snapshot(vote, snapshot)
        .await
        .map_err(|e| e.to_string());
    // Installed snapshots were moved into `snapshots/`; one openraft did not
    // need (older than what this node has) is still here.
    // An install a failure interrupted still needs it (`store::snapshot::recover`).
    if dir.exists() && !store_snapshot::is_installing(&app.store, &dir) {
        let _ = std::fs::remove_dir_all(&dir);
    }
    match encode(&answer) {
        Ok(bytes) => Response::new(Body::from(bytes)),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}
