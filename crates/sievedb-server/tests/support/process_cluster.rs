//! A cluster of real `sievedb-server` processes on 127.0.0.1, each on a port
//! picked free and with its data directory in one temporary directory, which
//! the tests kill (SIGKILL), pause (SIGSTOP) and resume (SIGCONT); and the
//! blocking HTTP client operations they run against it, classified for a
//! [`History`](super::history::History).
//!
//! The nodes inherit the environment (`RUST_LOG` filters their logs, which go
//! to `n{id}.log` beside their data); the directory is removed at the end,
//! unless the test failed or `SIEVEDB_TEST_KEEP` is set.
//!
//! Every child is killed when the cluster is dropped (a panicking test
//! included) and, should the test process die without unwinding, by the
//! kernel (`PR_SET_PDEATHSIG`). That signal follows the *thread* that
//! spawned the child, so a cluster must start its processes from the one
//! thread that owns it (the test's), never from a worker thread.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};
use tempfile::TempDir;

use super::history::{Outcome, Ret};

/// One node: its process while it runs.
struct Proc {
    addr: SocketAddr,
    dir: PathBuf,
    log: PathBuf,
    child: Option<Child>,
    paused: bool,
}

/// Nodes `1..=n`.
pub struct ProcessCluster {
    nodes: Vec<Proc>,
    args: Vec<String>,
    http: ureq::Agent,
    /// Last, so that it is removed after the children are killed (kept,
    /// with the nodes' logs, when the test fails).
    root: Option<TempDir>,
}

/// An agent that reports HTTP statuses as answers, with `timeout` for a
/// whole request.
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .timeout_connect(Some(Duration::from_secs(1)))
        .build()
        .into()
}

/// `n` ports on 127.0.0.1 that were free a moment ago (all bound at once,
/// so that they differ), below the kernel's ephemeral range when it leaves
/// room: a killed node's port must still be free when it restarts, and an
/// outgoing connection (any process's) may take a port of that range.
fn free_ports(n: usize) -> Vec<u16> {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(0);
    let mut held: Vec<TcpListener> = Vec::new();
    if low > 20_000 {
        let (mut rng, _) = super::rng::Rng::from_time();
        let span = u64::from(low - 10_000);
        for _ in 0..200 {
            if held.len() == n {
                break;
            }
            let port = 10_000 + u16::try_from(rng.below(span)).expect("port");
            if let Ok(l) = TcpListener::bind(("127.0.0.1", port)) {
                held.push(l);
            }
        }
    }
    while held.len() < n {
        held.push(TcpListener::bind("127.0.0.1:0").expect("bind a free port"));
    }
    held.iter()
        .map(|l| l.local_addr().expect("local address").port())
        .collect()
}

impl ProcessCluster {
    /// Starts `n` nodes with the extra flags `args` (each also gets its
    /// `--id`, `--listen` and `--db`), initializes them as one cluster and
    /// waits for a leader.
    pub fn start(n: u64, args: &[&str]) -> ProcessCluster {
        let root = tempfile::tempdir().expect("tempdir");
        let ports = free_ports(usize::try_from(n).expect("n"));
        let nodes = ports
            .iter()
            .zip(1..)
            .map(|(&port, id)| Proc {
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
                dir: root.path().join(format!("n{id}")),
                log: root.path().join(format!("n{id}.log")),
                child: None,
                paused: false,
            })
            .collect();
        let mut c = ProcessCluster {
            nodes,
            args: args.iter().map(ToString::to_string).collect(),
            http: agent(Duration::from_secs(2)),
            root: Some(root),
        };
        for id in 1..=n {
            c.spawn(id);
        }
        for id in 1..=n {
            c.wait_healthy(id);
        }
        let members: serde_json::Map<String, Value> = (1..=n)
            .map(|id| (id.to_string(), Value::String(c.addr(id).to_string())))
            .collect();
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let r = c
                .http
                .post(&c.url(1, "/cluster/init"))
                .send(json!({ "members": members }).to_string());
            match r {
                Ok(r) if r.status() == 200 => break,
                other => assert!(
                    Instant::now() < deadline,
                    "init: {:?}\n{}",
                    other.map(|r| r.status()),
                    c.log_tail(1)
                ),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        c.leader(Duration::from_secs(20));
        c
    }

    fn node(&self, id: u64) -> &Proc {
        &self.nodes[usize::try_from(id - 1).expect("id")]
    }

    fn node_mut(&mut self, id: u64) -> &mut Proc {
        &mut self.nodes[usize::try_from(id - 1).expect("id")]
    }

    /// The node ids.
    pub fn ids(&self) -> Vec<u64> {
        (1..=self.nodes.len() as u64).collect()
    }

    /// Node `id`'s address.
    pub fn addr(&self, id: u64) -> SocketAddr {
        self.node(id).addr
    }

    /// Every node's address, by id - 1.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|p| p.addr).collect()
    }

    /// `http://{node id}{path}`.
    pub fn url(&self, id: u64, path: &str) -> String {
        format!("http://{}{path}", self.addr(id))
    }

    /// Whether node `id` runs and is not paused.
    pub fn is_up(&self, id: u64) -> bool {
        let p = self.node(id);
        p.child.is_some() && !p.paused
    }

    fn spawn(&mut self, id: u64) {
        let bin = env!("CARGO_BIN_EXE_sievedb-server");
        let p = self.node(id);
        assert!(p.child.is_none(), "node {id} runs already");
        let log = File::options()
            .create(true)
            .append(true)
            .open(&p.log)
            .expect("log file");
        let mut cmd = Command::new(bin);
        cmd.arg("--id")
            .arg(id.to_string())
            .arg("--listen")
            .arg(p.addr.to_string())
            .arg("--db")
            .arg(&p.dir)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: the closure runs in the child between fork and exec and
        // only calls prctl(2), which is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn sievedb-server");
        let p = self.node_mut(id);
        p.child = Some(child);
        p.paused = false;
    }

    /// Waits (up to 15 s) until node `id` answers `/health`.
    fn wait_healthy(&mut self, id: u64) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let url = self.url(id, "/health");
            if self.http.get(&url).call().is_ok_and(|r| r.status() == 200) {
                return;
            }
            let exited = self
                .node_mut(id)
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.node_mut(id).child = None;
                panic!("node {id} exited ({status}):\n{}", self.log_tail(id));
            }
            assert!(
                Instant::now() < deadline,
                "node {id} not healthy within 15 s:\n{}",
                self.log_tail(id)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts node `id` again (same port, same data) and waits until it
    /// serves HTTP.
    pub fn restart(&mut self, id: u64) {
        self.spawn(id);
        self.wait_healthy(id);
    }

    /// SIGKILLs node `id` and reaps it.
    pub fn kill(&mut self, id: u64) {
        let p = self.node_mut(id);
        let mut child = p
            .child
            .take()
            .unwrap_or_else(|| panic!("node {id} is not running"));
        p.paused = false;
        let _ = child.kill();
        let _ = child.wait();
    }

    fn signal(&mut self, id: u64, sig: libc::c_int) {
        let p = self.node(id);
        let pid = p
            .child
            .as_ref()
            .unwrap_or_else(|| panic!("node {id} is not running"))
            .id();
        let pid = libc::pid_t::try_from(pid).expect("pid");
        // SAFETY: kill(2) on our own child, which has not been reaped (so
        // its pid is not reused).
        let r = unsafe { libc::kill(pid, sig) };
        assert_eq!(r, 0, "kill({pid}, {sig})");
    }

    /// SIGSTOPs node `id`.
    pub fn pause(&mut self, id: u64) {
        self.signal(id, libc::SIGSTOP);
        self.node_mut(id).paused = true;
    }

    /// SIGCONTs node `id`.
    pub fn resume(&mut self, id: u64) {
        self.signal(id, libc::SIGCONT);
        self.node_mut(id).paused = false;
    }

    /// Node `id`'s `/cluster/status`, if it answers within 2 s.
    pub fn status(&self, id: u64) -> Option<Value> {
        let mut r = self
            .http
            .get(&self.url(id, "/cluster/status"))
            .call()
            .ok()?;
        serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()
    }

    /// The leader, once a running node says it leads and every other one
    /// (not paused) follows it; panics after `within`.
    pub fn leader(&self, within: Duration) -> u64 {
        let deadline = Instant::now() + within;
        loop {
            let up: Vec<u64> = self.ids().into_iter().filter(|&i| self.is_up(i)).collect();
            let seen: Vec<(u64, Option<Value>)> = up.iter().map(|&i| (i, self.status(i))).collect();
            let leader = seen.iter().find_map(|(i, s)| {
                let s = s.as_ref()?;
                (s["state"] == "Leader" && s["leader_id"].as_u64() == Some(*i)).then_some(*i)
            });
            if let Some(l) = leader {
                if seen
                    .iter()
                    .all(|(_, s)| s.as_ref().and_then(|s| s["leader_id"].as_u64()) == Some(l))
                {
                    return l;
                }
            }
            assert!(
                Instant::now() < deadline,
                "no leader within {within:?}: {seen:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last lines of node `id`'s stderr.
    pub fn log_tail(&self, id: u64) -> String {
        let text = std::fs::read_to_string(&self.node(id).log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The temporary directory holding the nodes' data and logs.
    pub fn root(&self) -> &std::path::Path {
        self.root.as_ref().expect("root").path()
    }
}

impl Drop for ProcessCluster {
    fn drop(&mut self) {
        for p in &mut self.nodes {
            if let Some(mut c) = p.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let keep = std::env::var_os("SIEVEDB_TEST_KEEP").is_some();
        if std::thread::panicking() {
            for id in self.ids() {
                eprintln!("--- node {id}'s log, last lines:\n{}", self.log_tail(id));
            }
        }
        if std::thread::panicking() || keep {
            if let Some(root) = self.root.take() {
                eprintln!(
                    "--- the nodes' directories are kept in {}",
                    root.keep().display()
                );
            }
        }
    }
}

/// What the server (or the connection) answered.
#[derive(Debug, Clone)]
pub enum Answer {
    /// An HTTP answer.
    Status(u16, String),
    /// Nothing: the connection was refused or never set up, so the request
    /// was not sent.
    NotSent(String),
    /// The request may have been sent, and no answer came (a timeout, a
    /// broken connection).
    Lost(String),
}

/// A client operation's classified result.
#[derive(Debug, Clone)]
pub struct Reply {
    /// For the history.
    pub outcome: Outcome,
    /// What came back.
    pub answer: Answer,
}

impl Reply {
    /// Whether this is a 503 that says the outcome is unknown (a forward
    /// that broke after it may have reached the leader).
    pub fn outcome_unknown_503(&self) -> bool {
        matches!(&self.answer, Answer::Status(503, b) if b.contains("outcome unknown"))
    }

    /// The HTTP status, if any.
    pub fn status(&self) -> Option<u16> {
        match self.answer {
            Answer::Status(s, _) => Some(s),
            _ => None,
        }
    }
}

fn send(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    match r {
        Ok(mut r) => {
            let status = r.status().as_u16();
            match r.body_mut().read_to_string() {
                Ok(body) => Answer::Status(status, body),
                Err(e) => Answer::Lost(format!("reading the body of a {status}: {e}")),
            }
        }
        Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Answer::NotSent(e.to_string())
        }
        Err(e @ (ureq::Error::ConnectionFailed | ureq::Error::Timeout(ureq::Timeout::Connect))) => {
            Answer::NotSent(e.to_string())
        }
        Err(e) => Answer::Lost(e.to_string()),
    }
}

/// How a write's answer classifies: 200 is done (`ok` parses the body),
/// 421 and 4xx did nothing, a 503 or no answer after sending is unknown.
fn classify_write(answer: Answer, ok: impl Fn(&str) -> Option<Ret>) -> Reply {
    let outcome = match &answer {
        Answer::Status(200, body) => {
            Outcome::Ok(ok(body).unwrap_or_else(|| panic!("unexpected 200 body {body:?}")))
        }
        Answer::Status(s, _) if (400..500).contains(s) => Outcome::Fail,
        Answer::NotSent(_) => Outcome::Fail,
        Answer::Status(..) | Answer::Lost(_) => Outcome::Unknown,
    };
    Reply { outcome, answer }
}

/// `PUT /kv/{key}` = `value` (in decimal) on `addr`.
pub fn put(agent: &ureq::Agent, addr: SocketAddr, key: &str, value: u64) -> Reply {
    let a = send(
        agent
            .put(&format!("http://{addr}/kv/{key}"))
            .send(value.to_string()),
    );
    classify_write(a, |_| Some(Ret::Written))
}

/// A linearizable `GET /kv/{key}` on `addr` (a decimal value, or absent).
pub fn get(agent: &ureq::Agent, addr: SocketAddr, key: &str) -> Reply {
    let answer = send(agent.get(&format!("http://{addr}/kv/{key}")).call());
    let outcome = match &answer {
        Answer::Status(200, body) => Outcome::Ok(Ret::Value(Some(
            body.parse()
                .unwrap_or_else(|_| panic!("not a decimal value: {body:?}")),
        ))),
        Answer::Status(404, _) => Outcome::Ok(Ret::Value(None)),
        // A read that did not answer did nothing.
        _ => Outcome::Fail,
    };
    Reply { outcome, answer }
}

/// `POST /txn`: if `key` holds `expect` (`None`: absent), put `new`.
pub fn cas(
    agent: &ureq::Agent,
    addr: SocketAddr,
    key: &str,
    expect: Option<u64>,
    new: u64,
) -> Reply {
    let k = B64.encode(key);
    let body = json!({
        "compare": [{ "key": k, "value": expect.map(|v| B64.encode(v.to_string())) }],
        "success": [{ "put": { "key": k, "value": B64.encode(new.to_string()) } }],
    });
    let a = send(
        agent
            .post(&format!("http://{addr}/txn"))
            .send(body.to_string()),
    );
    classify_write(a, |body| {
        let v: Value = serde_json::from_str(body).ok()?;
        Some(Ret::Swapped(v["succeeded"].as_bool()?))
    })
}
