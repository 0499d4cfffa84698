//! End-to-end tests of `sievedb remote ...` and `sievedb bench-cluster`
//! against real `sievedb-server` processes on loopback.
//!
//! The server binary: `$SIEVEDB_SERVER` if set, else `sievedb-server` next
//! to this test's own target directory (`<target>/<profile>/`), which
//! `cargo test --workspace` builds (the server crate has integration tests,
//! so cargo builds its binary). When it is missing (e.g. `cargo test -p
//! sievedb-cli` on a fresh target directory), the test builds it with
//! `cargo build -p sievedb-server` into the same target directory. A
//! dev-dependency on sievedb-server would not do: cargo gives a test the
//! paths of its own package's binaries only.
//!
//! Every wait has a deadline, and a guard kills the servers even when a
//! test panics.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;

use common::*;

/// The profile directory this test runs from: `<target>/<profile>`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // <target>/<profile>/deps/cli_remote-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary in <target>/<profile>/deps")
        .to_path_buf()
}

/// The `sievedb-server` binary, built if missing.
fn server_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("SIEVEDB_SERVER") {
        return PathBuf::from(p);
    }
    let profile = profile_dir();
    let bin = profile.join(format!("sievedb-server{}", std::env::consts::EXE_SUFFIX));
    if bin.exists() {
        return bin;
    }
    let target = profile.parent().expect("target dir");
    let mut cmd = Command::new(option_env!("CARGO").unwrap_or("cargo"));
    cmd.args(["build", "-p", "sievedb-server", "--bin", "sievedb-server"])
        .arg("--target-dir")
        .arg(target)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    eprintln!("building sievedb-server into {}", target.display());
    let mut child = cmd.spawn().expect("run cargo build -p sievedb-server");
    let deadline = Instant::now() + Duration::from_secs(1200);
    loop {
        if let Some(status) = child.try_wait().expect("wait cargo") {
            assert!(status.success(), "cargo build -p sievedb-server: {status}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("cargo build -p sievedb-server took over 20 minutes");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(bin.exists(), "{} missing after the build", bin.display());
    bin
}

/// A port nothing listens on (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// Server processes, killed on drop (a panicking test included).
struct Servers {
    children: Vec<Child>,
    addrs: Vec<String>,
    dir: tempfile::TempDir,
}

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Servers {
    /// `n` nodes on free ports with `extra` flags, each answering /health.
    fn start(n: usize, extra: &[&str]) -> Servers {
        let bin = server_binary();
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = Servers {
            children: Vec::new(),
            addrs: Vec::new(),
            dir,
        };
        for id in 1..=n {
            let addr = format!("127.0.0.1:{}", free_port());
            let log = std::fs::File::create(s.dir.path().join(format!("n{id}.log"))).unwrap();
            let child = Command::new(&bin)
                .args(["--id", &id.to_string(), "--listen", &addr, "--db"])
                .arg(s.dir.path().join(format!("n{id}")))
                .args(extra)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("spawn sievedb-server");
            s.children.push(child);
            s.addrs.push(addr);
        }
        let http = agent();
        for (i, a) in s.addrs.iter().enumerate() {
            wait_for(&format!("node {} at {a} to serve", i + 1), || {
                http.get(format!("http://{a}/health"))
                    .call()
                    .is_ok_and(|r| r.status() == 200)
            });
        }
        s
    }

    /// Initializes every node as a voter and waits for a leader: its index.
    fn init(&self) -> usize {
        let http = agent();
        let members: serde_json::Map<String, Value> = self
            .addrs
            .iter()
            .enumerate()
            .map(|(i, a)| ((i + 1).to_string(), Value::String(a.clone())))
            .collect();
        let body = serde_json::json!({ "members": members }).to_string();
        let r = http
            .post(format!("http://{}/cluster/init", self.addrs[0]))
            .send(body.as_bytes())
            .expect("init");
        assert_eq!(r.status(), 200);
        let mut leader = 0;
        wait_for("a leader", || {
            let Ok(mut r) = http
                .get(format!("http://{}/cluster/status", self.addrs[0]))
                .call()
            else {
                return false;
            };
            let body = r.body_mut().read_to_vec().unwrap_or_default();
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            match v["leader_id"].as_u64() {
                Some(id) => {
                    leader = usize::try_from(id).unwrap() - 1;
                    true
                }
                None => false,
            }
        });
        leader
    }

    fn pids(&self) -> Vec<String> {
        self.children.iter().map(|c| c.id().to_string()).collect()
    }
}

#[track_caller]
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "no {what} within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The fields of a CSV line (`"..."` quoting, `""` for a quote).
fn split_csv(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

fn remote_once(addr: &str, args: &[&str]) -> Output {
    let mut v = vec!["remote", "--addr", addr];
    v.extend_from_slice(args);
    sievedb(&v)
}

/// `sievedb remote --addr ADDR ARGS`, again while the answer is a 503: on
/// a loaded machine, a leader's read-index round can miss its quorum (the
/// followers' heartbeat answers come late) and the server answers 503 at
/// once. Every command retried here is idempotent.
fn remote(addr: &str, args: &[&str]) -> Output {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let o = remote_once(addr, args);
        if !stderr(&o).contains("(503)") || Instant::now() > deadline {
            return o;
        }
        eprintln!("retrying {args:?} after: {}", stderr(&o).trim());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn remote_commands_on_a_three_node_cluster() {
    let c = Servers::start(3, &[]);
    let leader = c.init();
    let follower = &c.addrs[(leader + 1) % 3];
    let other = &c.addrs[(leader + 2) % 3];

    // Through a follower (forwarded), read from another node.
    assert_eq!(ok(&remote(follower, &["put", "alpha", "one"])), "");
    assert_eq!(ok(&remote(other, &["get", "alpha"])), "one\n");
    // Escaped bytes both ways; `/` and `?` in a key; the empty value.
    ok(&remote(follower, &["put", "bin%00%ff", "a b%25%22"]));
    assert_eq!(ok(&remote(other, &["get", "bin%00%FF"])), "a%20b%25%22\n");
    ok(&remote(&c.addrs[leader], &["put", "a/b?c=d", "\"\""]));
    assert_eq!(ok(&remote(other, &["get", "a/b?c=d"])), "\"\"\n");
    // A stale read on the leader, which applied every acknowledged write.
    assert_eq!(
        ok(&remote(&c.addrs[leader], &["get", "--stale", "alpha"])),
        "one\n"
    );

    let missing = remote(other, &["get", "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(stdout(&missing), "");
    assert_eq!(stderr(&missing).trim(), "not found");

    assert_eq!(
        ok(&remote(other, &["scan"])),
        "a/b?c=d \"\"\nalpha one\nbin%00%FF a%20b%25%22\n"
    );
    assert_eq!(
        ok(&remote(other, &["scan", "--prefix", "a", "--limit", "1"])),
        "a/b?c=d \"\"\n"
    );
    assert_eq!(
        ok(&remote(other, &["scan", "--prefix", "al", "--stale"])),
        "alpha one\n"
    );

    assert_eq!(ok(&remote(follower, &["delete", "alpha"])), "");
    assert_eq!(remote(other, &["get", "alpha"]).status.code(), Some(1));
    // Deleting an absent key is no error.
    ok(&remote(follower, &["delete", "alpha"]));

    let status: Value = serde_json::from_str(&ok(&remote(other, &["status"]))).unwrap();
    assert_eq!(status["leader_id"].as_u64(), Some(leader as u64 + 1));
    assert_eq!(status["members"].as_object().map(|m| m.len()), Some(3));

    // An empty key is the server's 400, shown as one line.
    let bad = remote(other, &["get", "\"\""]);
    assert_eq!(bad.status.code(), Some(1));
    let err = stderr(&bad);
    assert!(
        err.contains("bad request (400)") && err.contains("empty key"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // bench-cluster: puts then gets at 1 and 4 clients, through the leader,
    // with the nodes' write bytes; then the failover probe kills the leader.
    let out = tempfile::tempdir().unwrap();
    let csv = out.path().join("points.csv");
    let json = out.path().join("points.json");
    let endpoints = c.addrs.join(",");
    let pids = c.pids().join(",");
    let o = sievedb(&[
        "bench-cluster",
        "--target",
        "sievedb",
        "--endpoints",
        &endpoints,
        "--clients",
        "1,4",
        "--seconds",
        "1",
        "--keys",
        "200",
        "--preload",
        "--io-pids",
        &pids,
        "--failover-probe",
        "--pids",
        &pids,
        "--probe-warmup",
        "1",
        "--probe-give-up",
        "20",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    ok(&o);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<String>> = lines.map(split_csv).collect();
    let seen: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r[col("workload")].clone(), r[col("clients")].clone()))
        .collect();
    let want = [
        ("put", "1"),
        ("put", "4"),
        ("get", "1"),
        ("get", "4"),
        ("failover", "4"),
    ];
    assert_eq!(
        seen,
        want.map(|(w, c)| (w.to_string(), c.to_string())),
        "{text}"
    );
    for r in &rows {
        assert_eq!(r[col("target")], "sievedb");
        let ops: u64 = r[col("ops")].parse().unwrap();
        assert!(ops > 0, "{text}");
        if r[col("workload")] == "get" {
            assert_eq!(r[col("misses")], "0", "preloaded: {text}");
        }
        if r[col("workload")] == "put" {
            let per_put: f64 = r[col("write_bytes_per_put")].parse().unwrap();
            assert!(per_put > 0.0, "{text}");
        }
    }
    let failover: f64 = rows[4][col("failover_ms")].parse().unwrap();
    assert!(failover > 0.0 && failover < 20_000.0, "{text}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let jrows = doc["runs"][0]["rows"].as_array().unwrap();
    assert_eq!(jrows.len(), 5);
    assert!(jrows
        .iter()
        .all(|r| r["ops_per_sec"].as_f64().unwrap() > 0.0));
    // The killed leader is down; the others go on.
    let survivor = &c.addrs[(leader + 1) % 3];
    ok(&remote(survivor, &["put", "after", "failover"]));
    let down = remote(&c.addrs[leader], &["get", "after"]);
    assert_eq!(down.status.code(), Some(1));
    assert!(
        stderr(&down).contains("connection refused"),
        "{}",
        stderr(&down)
    );
}

#[test]
fn remote_errors_are_one_line() {
    // Nothing listening.
    let addr = format!("127.0.0.1:{}", free_port());
    for args in [&["get", "k"][..], &["put", "k", "v"], &["status"]] {
        let o = remote_once(&addr, args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.starts_with("error: ") && err.contains("connection refused"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A node that was never initialized knows no leader: 503 in time.
    let c = Servers::start(1, &["--request-timeout-ms", "300"]);
    let o = remote_once(&c.addrs[0], &["put", "k", "v"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("unavailable (503)"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // bench-cluster says why it cannot start.
    let o = sievedb(&["bench-cluster", "--endpoints", &addr, "--seconds", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("connection refused"), "{}", stderr(&o));
}
