//! The Raft stream (`GET /raft/stream`, `network/stream.rs`) against real
//! nodes: a peer's kept connection survives the remote node's restart, and
//! a malformed frame closes the connection without harming the node.

mod in_process;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use in_process::Cluster;
use openraft::error::RPCError;
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::VoteRequest;
use openraft::{BasicNode, Vote};
use sievedb_server::network::raft::{Network, Peer};

/// A vote for a candidate of term 0: every node answers it (refused).
fn stale_vote() -> VoteRequest<u64> {
    VoteRequest::new(Vote::new(0, 99), None)
}

fn option() -> RPCOption {
    RPCOption::new(Duration::from_secs(5))
}

#[test]
fn a_peer_reconnects_after_the_node_restarts() {
    let mut c = Cluster::new(3, |_| {});
    c.init(&[1, 2, 3]);
    c.leader();
    let node = BasicNode::new(c.addr(2));
    let mut peer: Peer = c.rt.block_on(async {
        let mut net = Network::new(reqwest::Client::new(), std::time::Duration::from_millis(50));
        net.new_client(2, &node).await
    });
    let r = c.rt.block_on(peer.vote(stale_vote(), option()));
    assert!(!r.expect("vote answered").vote_granted);

    // Stopped: its end of the kept connection closes, and a new one is
    // refused, so the node is unreachable.
    c.stop(2);
    let r = c.rt.block_on(peer.vote(stale_vote(), option()));
    assert!(matches!(r, Err(RPCError::Unreachable(_))), "{r:?}");

    // Restarted on the same port: the same peer connects again.
    c.restart(2);
    for _ in 0..3 {
        let r = c.rt.block_on(peer.vote(stale_vote(), option()));
        assert!(!r.expect("vote answered after the restart").vote_granted);
    }

    // And a kept connection that the node closed behind the peer's back
    // (a restart between two calls) is replaced without an error.
    c.stop(2);
    c.restart(2);
    let r = c.rt.block_on(peer.vote(stale_vote(), option()));
    assert!(!r.expect("vote answered on a new connection").vote_granted);
    drop(peer);

    // The cluster still replicates to it.
    let leader = c.leader();
    assert_eq!(c.put(leader, "after", "restarts"), 200);
    c.wait_for(2, "after", "restarts");
}

/// An upgraded raw connection to `addr`.
fn upgraded(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET /raft/stream HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: sievedb-raft\r\n\r\n"
    )
    .expect("write");
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut b).expect("read head"), 1, "head: {head:?}");
        head.push(b[0]);
    }
    let head = String::from_utf8(head).expect("utf-8");
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("upgrade: sievedb-raft"),
        "{head}"
    );
    s
}

/// Reads until the server closes the connection; what it sent before.
fn until_closed(s: &mut TcpStream) -> Vec<u8> {
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).expect("closed, not timed out");
    rest
}

#[test]
fn malformed_frames_close_the_connection() {
    let c = Cluster::new(1, |_| {});
    c.init(&[1]);
    c.leader();
    let addr = c.addr(1);

    // A body that is no request.
    let mut s = upgraded(&addr);
    s.write_all(&[3, 0, 0, 0, 7, 1, 2]).expect("write");
    assert_eq!(until_closed(&mut s), b"");

    // A length over the limit.
    let mut s = upgraded(&addr);
    s.write_all(&u32::MAX.to_le_bytes()).expect("write");
    assert_eq!(until_closed(&mut s), b"");

    // A frame cut short by the sender's close.
    let mut s = upgraded(&addr);
    s.write_all(&[100, 0, 0, 0, 1, 2]).expect("write");
    s.shutdown(std::net::Shutdown::Write).expect("shutdown");
    assert_eq!(until_closed(&mut s), b"");

    // A GET without the upgrade is a bad request.
    let r = c.http.get(&c.url(1, "/raft/stream")).call().expect("get");
    assert_eq!(r.status(), 400);

    // The node serves on.
    assert_eq!(c.put(1, "k", "v"), 200);
    assert_eq!(c.get(1, "k", false), (200, "v".to_string()));
}
