//! A cluster of nodes in the test process (each with its own data
//! directory, its own port on 127.0.0.1 and real HTTP between them), driven
//! through the HTTP API with a blocking client.

use std::time::{Duration, Instant};

use serde_json::Value;
use sievedb_server::app::{Node, NodeOptions};
use tempfile::TempDir;
use tokio::runtime::Runtime;

/// Nodes `1..` of a cluster, started and stopped on one runtime.
pub struct Cluster {
    pub rt: Runtime,
    pub dirs: TempDir,
    pub opts: Vec<NodeOptions>,
    pub nodes: Vec<Option<Node>>,
    pub http: ureq::Agent,
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(15)))
        .build()
        .into()
}

impl Cluster {
    /// `n` nodes, none initialized; `tweak` adjusts every node's options.
    pub fn new(n: u64, tweak: impl Fn(&mut NodeOptions)) -> Cluster {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let dirs = tempfile::tempdir().expect("tempdir");
        let mut c = Cluster {
            rt,
            dirs,
            opts: Vec::new(),
            nodes: Vec::new(),
            http: agent(),
        };
        for id in 1..=n {
            c.add_node(id, &tweak);
        }
        c
    }

    /// Starts node `id` (the next one) on a free port.
    pub fn add_node(&mut self, id: u64, tweak: &impl Fn(&mut NodeOptions)) {
        assert_eq!(id as usize, self.opts.len() + 1);
        let mut o = NodeOptions::new(
            id,
            "127.0.0.1:0".parse().expect("addr"),
            self.dirs.path().join(format!("n{id}")),
        );
        o.heartbeat = Duration::from_millis(50);
        o.election_timeout = (Duration::from_millis(300), Duration::from_millis(600));
        tweak(&mut o);
        let node = self
            .rt
            .block_on(Node::start(o.clone()))
            .expect("start node");
        // Restarts reuse the port it got.
        o.listen = node.addr;
        self.opts.push(o);
        self.nodes.push(Some(node));
    }

    #[allow(dead_code, reason = "not every test binary uses every helper")]
    pub fn addr(&self, id: u64) -> String {
        self.opts[id as usize - 1].listen.to_string()
    }

    pub fn url(&self, id: u64, path: &str) -> String {
        format!("http://{}{path}", self.addr(id))
    }

    /// Initializes the cluster with `members` through node `members[0]`.
    pub fn init(&self, members: &[u64]) {
        let m: serde_json::Map<String, Value> = members
            .iter()
            .map(|&id| (id.to_string(), Value::String(self.addr(id))))
            .collect();
        let body = serde_json::json!({ "members": m }).to_string();
        let r = self
            .http
            .post(&self.url(members[0], "/cluster/init"))
            .send(body)
            .expect("init");
        assert_eq!(r.status(), 200);
    }

    pub fn status(&self, id: u64) -> Value {
        let mut r = self
            .http
            .get(&self.url(id, "/cluster/status"))
            .call()
            .expect("status");
        serde_json::from_str(&r.body_mut().read_to_string().expect("body")).expect("json")
    }

    /// The leader the running nodes agree on, once there is one.
    pub fn leader(&self) -> u64 {
        let since = Instant::now();
        loop {
            let running: Vec<u64> = (1..=self.nodes.len() as u64)
                .filter(|&i| self.nodes[i as usize - 1].is_some())
                .collect();
            let seen: Vec<Option<u64>> = running
                .iter()
                .map(|&i| self.status(i)["leader_id"].as_u64())
                .collect();
            if let Some(Some(l)) = seen.first() {
                if running.contains(l) && seen.iter().all(|s| *s == Some(*l)) {
                    return *l;
                }
            }
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "no leader: {seen:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Puts `key` = `value` through node `id`; a 503 (no leader yet, or an
    /// outcome unknown across a leader change) is retried for up to 20 s:
    /// a put of the same value is idempotent.
    pub fn put(&self, id: u64, key: &str, value: &str) -> u16 {
        let since = Instant::now();
        loop {
            let r = self
                .http
                .put(&self.url(id, &format!("/kv/{key}")))
                .send(value)
                .expect("put");
            let s = r.status().as_u16();
            if s != 503 || since.elapsed() > Duration::from_secs(20) {
                return s;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// (status, body) of a read of `key` on node `id`.
    pub fn get(&self, id: u64, key: &str, stale: bool) -> (u16, String) {
        let q = if stale { "?consistency=stale" } else { "" };
        let mut r = self
            .http
            .get(&self.url(id, &format!("/kv/{key}{q}")))
            .call()
            .expect("get");
        (
            r.status().as_u16(),
            r.body_mut().read_to_string().expect("body"),
        )
    }

    /// Waits until node `id`'s state machine has `key` = `value`.
    pub fn wait_for(&self, id: u64, key: &str, value: &str) {
        let since = Instant::now();
        while self.get(id, key, true) != (200, value.to_string()) {
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "node {id} never got {key}={value}: {:?}",
                self.get(id, key, true)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[allow(dead_code, reason = "not every test binary uses every helper")]
    pub fn stop(&mut self, id: u64) {
        let node = self.nodes[id as usize - 1].take().expect("running");
        self.rt.block_on(node.shutdown()).expect("shutdown");
    }

    pub fn restart(&mut self, id: u64) {
        let o = self.opts[id as usize - 1].clone();
        let node = self.rt.block_on(Node::start(o)).expect("restart");
        self.nodes[id as usize - 1] = Some(node);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for n in self.nodes.iter_mut().filter_map(Option::take) {
            let _ = self.rt.block_on(n.shutdown());
        }
    }
}
