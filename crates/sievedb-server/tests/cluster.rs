//! Clusters of nodes in this test process (each with its own data directory,
//! its own port on 127.0.0.1 and real HTTP between them): writes through
//! leader changes and restarts, a follower caught up by snapshot after the
//! log it missed was purged, membership changes online, 421 without
//! forwarding. Process kills and pauses are in `failures.rs`.

mod in_process;

use std::time::{Duration, Instant};

use in_process::Cluster;
use serde_json::Value;
use sievedb_server::app::NodeOptions;

#[test]
fn writes_survive_leader_changes_and_full_restarts() {
    let mut c = Cluster::new(3, |_| {});
    c.init(&[1, 2, 3]);
    let first = c.leader();
    for i in 0..30 {
        // Any node: followers forward to the leader.
        assert_eq!(c.put(i % 3 + 1, &format!("k{i}"), &format!("v{i}")), 200);
    }
    c.stop(first);
    let second = c.leader();
    assert_ne!(first, second);
    for i in 30..60 {
        assert_eq!(c.put(second, &format!("k{i}"), &format!("v{i}")), 200);
    }
    c.restart(first);
    c.wait_for(first, "k59", "v59");
    for id in 1..=3 {
        c.stop(id);
    }
    for id in 1..=3 {
        c.restart(id);
    }
    c.leader();
    for i in 0..60 {
        let id = i % 3 + 1;
        assert_eq!(
            c.get(id, &format!("k{i}"), false),
            (200, format!("v{i}")),
            "k{i} on {id}"
        );
    }
    assert_eq!(c.get(1, "never-written", false).0, 404);
}

#[test]
fn a_follower_behind_a_purged_log_catches_up_by_snapshot() {
    let mut c = Cluster::new(3, |o| {
        o.snapshot_logs = 20;
        o.keep_logs = 0;
    });
    c.init(&[1, 2, 3]);
    let leader = c.leader();
    let behind = leader % 3 + 1;
    c.stop(behind);
    for i in 0..200 {
        assert_eq!(c.put(leader, &format!("k{i:03}"), &format!("v{i}")), 200);
    }
    // The leader's log no longer has what `behind` lacks.
    let since = Instant::now();
    while c.status(leader)["purged_index"].as_u64().unwrap_or(0) < 100 {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "{}",
            c.status(leader)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    c.restart(behind);
    c.wait_for(behind, "k199", "v199");
    let s = c.status(behind);
    assert!(
        s["snapshot_index"].as_u64().unwrap_or(0) >= 100,
        "no snapshot installed: {s}"
    );
    for i in 0..200 {
        assert_eq!(
            c.get(behind, &format!("k{i:03}"), true),
            (200, format!("v{i}"))
        );
    }
    // It keeps following after the install, and across a restart.
    assert_eq!(c.put(leader, "after", "x"), 200);
    c.wait_for(behind, "after", "x");
    c.stop(behind);
    c.restart(behind);
    c.wait_for(behind, "k000", "v0");
    c.wait_for(behind, "after", "x");
}

#[test]
fn a_snapshot_slower_than_an_election_timeout_does_not_depose_the_leader() {
    // Short timeouts, and a snapshot of 48 MiB: sending and installing it
    // takes longer than an election timeout, while openraft's heartbeats to
    // the follower wait behind it. The receiver renews the leader's lease
    // meanwhile; without that it campaigned, deposed the leader and the
    // transfer started over.
    let tweak = |o: &mut NodeOptions| {
        o.heartbeat = Duration::from_millis(30);
        o.election_timeout = (Duration::from_millis(150), Duration::from_millis(300));
        o.snapshot_logs = 10;
        o.keep_logs = 0;
    };
    let mut c = Cluster::new(3, tweak);
    c.init(&[1, 2, 3]);
    let leader = c.leader();
    let behind = leader % 3 + 1;
    c.stop(behind);
    let big = "x".repeat(1 << 20);
    for i in 0..48 {
        assert_eq!(c.put(leader, &format!("big{i:02}"), &big), 200);
    }
    let since = Instant::now();
    while c.status(leader)["purged_index"].as_u64().unwrap_or(0) < 20 {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "{}",
            c.status(leader)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The leader now (the writes may have seen an election on a slow
    // machine), its term and what it applied.
    let leader = c.leader();
    let s = c.status(leader);
    let term = s["term"].as_u64().expect("term");
    let want = s["last_applied"].as_u64().expect("last_applied");
    let others: Vec<u64> = (1..=3).filter(|&i| i != leader && i != behind).collect();
    let started = Instant::now();
    c.restart(behind);
    // Every node's state, polled through the catch-up: a candidacy lasts at
    // least until its election fails (another election timeout, as the
    // others' leases reject it), so a 10 ms poll sees every one.
    let mut candidates = Vec::new();
    loop {
        for id in 1..=3 {
            let s = c.status(id);
            if s["state"] == "Candidate" {
                candidates.push((id, s["term"].as_u64()));
            }
        }
        if c.status(behind)["last_applied"].as_u64() >= Some(want) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{}",
            c.status(behind)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = started.elapsed();
    c.wait_for(behind, "big47", &big);
    let all: Vec<Value> = (1..=3).map(|id| c.status(id)).collect();
    // The receiver must never campaign: that is what the lease renewal is
    // for. A vote for itself in a later term is a candidacy the poll missed.
    let receiver = &all[behind as usize - 1];
    let voted_itself_later =
        receiver["voted_for"].as_u64() == Some(behind) && receiver["term"].as_u64() > Some(term);
    assert!(
        !candidates.iter().any(|&(id, _)| id == behind) && !voted_itself_later,
        "the node receiving the snapshot campaigned: candidates {candidates:?}, statuses {all:?}"
    );
    let s = &all[leader as usize - 1];
    if s["term"].as_u64() == Some(term) {
        assert_eq!(s["leader_id"].as_u64(), Some(leader), "{all:?}");
    } else {
        // Not the receiver: the third node, whose heartbeats a starved
        // machine (CI runs these tests two at a time on two cores) delayed
        // past its election timeout. Not what this test is about; said so.
        let campaigned: Vec<u64> = candidates.iter().map(|&(id, _)| id).collect();
        assert!(
            campaigned.iter().all(|id| others.contains(id)),
            "a new election during the catch-up, not by {others:?}: candidates {candidates:?}, statuses {all:?}"
        );
        eprintln!("node(s) {campaigned:?} campaigned during the catch-up (a starved machine)");
    }
    eprintln!(
        "caught up by snapshot in {} ms at term {term}",
        took.as_millis()
    );
}

#[test]
fn membership_changes_online() {
    let mut c = Cluster::new(3, |o| {
        o.snapshot_logs = 20;
        o.keep_logs = 0;
    });
    c.init(&[1, 2, 3]);
    for i in 0..50 {
        assert_eq!(c.put(1, &format!("k{i}"), &format!("v{i}")), 200);
    }
    // A new node joins as a learner (by snapshot: the log was purged),
    // becomes a voter, and node 1 leaves.
    c.add_node(4, &|o: &mut NodeOptions| {
        o.snapshot_logs = 20;
        o.keep_logs = 0;
    });
    let body = serde_json::json!({ "id": 4, "addr": c.addr(4) }).to_string();
    let r = c
        .http
        .post(&c.url(2, "/cluster/learner"))
        .send(body)
        .expect("learner");
    assert_eq!(r.status(), 200);
    c.wait_for(4, "k49", "v49");
    assert!(
        c.status(4)["learners"].get("4").is_some(),
        "{}",
        c.status(4)
    );
    let body = serde_json::json!({ "members": [2, 3, 4] }).to_string();
    let r = c
        .http
        .post(&c.url(3, "/cluster/membership"))
        .send(body)
        .expect("membership");
    assert_eq!(r.status(), 200);
    let since = Instant::now();
    loop {
        let s = c.status(4);
        let members: Vec<&String> = s["members"].as_object().expect("members").keys().collect();
        if members == ["2", "3", "4"] && s["leader_id"].as_u64().is_some_and(|l| l != 1) {
            break;
        }
        assert!(since.elapsed() < Duration::from_secs(20), "{s}");
        std::thread::sleep(Duration::from_millis(20));
    }
    c.stop(1);
    let leader = c.leader();
    assert_ne!(leader, 1);
    assert_eq!(c.put(4, "after", "y"), 200);
    for id in 2..=4 {
        assert_eq!(c.get(id, "after", false), (200, "y".to_string()));
        assert_eq!(c.get(id, "k0", false), (200, "v0".to_string()));
    }
}

#[test]
fn without_forwarding_a_follower_names_the_leader() {
    let c = Cluster::new(3, |o| o.forward = false);
    c.init(&[1, 2, 3]);
    let leader = c.leader();
    let follower = leader % 3 + 1;
    let r = c
        .http
        .put(&c.url(follower, "/kv/k"))
        .send("v")
        .expect("put");
    assert_eq!(r.status(), 421);
    let mut r = r;
    let v: Value =
        serde_json::from_str(&r.body_mut().read_to_string().expect("body")).expect("json");
    assert_eq!(v["leader_id"].as_u64(), Some(leader));
    assert_eq!(v["leader_addr"].as_str(), Some(c.addr(leader).as_str()));
    assert_eq!(c.get(follower, "k", false).0, 421);
    // Stale reads stay local.
    assert_eq!(c.get(follower, "k", true).0, 404);
    assert_eq!(c.put(leader, "k", "v"), 200);
}

#[test]
fn bad_requests_are_answered_400() {
    let c = Cluster::new(1, |_| {});
    c.init(&[1]);
    c.leader();
    let post = |path: &str, body: &str| {
        let mut r = c
            .http
            .post(&c.url(1, path))
            .send(body.to_string())
            .expect("post");
        (
            r.status().as_u16(),
            r.body_mut().read_to_string().expect("body"),
        )
    };
    let (s, b) = post("/txn", "{not json");
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("error"), "{b}");
    assert_eq!(
        post("/txn", r#"{"compare":[{"key":"%%%","value":null}]}"#).0,
        400
    );
    assert_eq!(post("/cluster/init", r#"{"members":{"x":"a"}}"#).0, 400);
    assert_eq!(post("/cluster/init", r#"{"members":{"1":"a"}}"#).0, 409);
    assert_eq!(c.get(1, "k?consistency=sometimes", false).0, 400);
    // An empty key is refused, not "not found".
    let mut r = c.http.get(&c.url(1, "/kv/")).call().expect("get");
    assert_eq!(r.status(), 400);
    assert!(r
        .body_mut()
        .read_to_string()
        .expect("body")
        .contains("empty key"));
    let r = c
        .http
        .get(&c.url(1, "/kv?limit=zero"))
        .call()
        .expect("scan");
    assert_eq!(r.status(), 400);
}

#[test]
fn concurrent_writes_share_entries_and_each_gets_its_own_answer() {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let c = Cluster::new(3, |_| {});
    c.init(&[1, 2, 3]);
    let leader = c.leader();
    let before = c.status(leader)["last_log_index"].as_u64().expect("index");
    // 16 clients increment one counter by compare-and-swap, 20 times each:
    // an increment's transaction may share an entry with others, and must
    // see the writes before it in that entry.
    let (threads, each) = (16, 20);
    let url = c.url(leader, "/txn");
    let read_url = c.url(leader, "/kv/counter");
    let attempts: Vec<(u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (url, read_url) = (url.clone(), read_url.clone());
                s.spawn(move || {
                    let http = in_process::agent();
                    let (mut won, mut tried) = (0u64, 0u64);
                    while won < each {
                        let mut r = http.get(&read_url).call().expect("get");
                        let cur: u64 = match r.status().as_u16() {
                            404 => 0,
                            200 => r.body_mut().read_to_string().expect("body").parse().expect("n"),
                            s => panic!("read answered {s}"),
                        };
                        let expect = if cur == 0 {
                            "null".to_string()
                        } else {
                            format!("\"{}\"", b64(&cur.to_string()))
                        };
                        let body = format!(
                            r#"{{"compare":[{{"key":"{k}","value":{expect}}}],"success":[{{"put":{{"key":"{k}","value":"{v}"}}}}]}}"#,
                            k = b64("counter"),
                            v = b64(&(cur + 1).to_string()),
                        );
                        let mut r = http.post(&url).send(body).expect("txn");
                        assert_eq!(r.status().as_u16(), 200);
                        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().expect("body"))
                            .expect("json");
                        tried += 1;
                        won += u64::from(v["succeeded"].as_bool().expect("succeeded"));
                    }
                    (won, tried)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client"))
            .collect()
    });
    let won: u64 = attempts.iter().map(|a| a.0).sum();
    let tried: u64 = attempts.iter().map(|a| a.1).sum();
    // Each success is one increment, and no failure swapped anything.
    assert_eq!(c.get(leader, "counter", false), (200, won.to_string()));
    assert_eq!(won, threads * each);
    // Fewer entries than writes: concurrent writes shared entries.
    let entries = c.status(leader)["last_log_index"].as_u64().expect("index") - before;
    assert!(entries < tried, "{entries} entries for {tried} writes");
    eprintln!("{tried} transactions ({won} succeeded) in {entries} entries");
}
