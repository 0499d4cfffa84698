//! A small blocking HTTP client for `sievedb-server`'s client API (see
//! `docs/guide/src/replication.md`), over `ureq` without TLS.
//!
//! Every answer other than the expected one becomes a [`RemoteError`] whose
//! message is one line naming the node and what went wrong: connection
//! refused, a timeout, 503 (no quorum or an election), 421 (not the leader,
//! with where the leader is), 400 (the server's message).

use std::fmt;
use std::io;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::Value;

/// What went wrong with a request, as one line for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError(pub String);

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RemoteError {}

/// An agent (a pool of persistent connections) whose non-2xx answers are
/// answers, not errors, and whose requests give up after `timeout`.
pub fn agent(timeout: Duration) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build();
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::default(),
        LiteralResolver::default(),
    )
}

/// Resolves an IP-literal host (`127.0.0.1:7001`, `[::1]:7001`) by parsing
/// it, and any other name as ureq does. ureq resolves before every request,
/// even on a kept-alive connection, and with a timeout set its resolver does
/// so on a new thread: one thread spawned per request (measured with
/// `strace -c -f` on `bench-cluster`: one `clone3` per put).
#[derive(Debug, Default)]
struct LiteralResolver {
    names: ureq::unversioned::resolver::DefaultResolver,
}

impl ureq::unversioned::resolver::Resolver for LiteralResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let literal = uri.host().and_then(|h| {
            let ip = h.trim_start_matches('[').trim_end_matches(']');
            let ip: std::net::IpAddr = ip.parse().ok()?;
            Some(std::net::SocketAddr::new(ip, uri.port_u16()?))
        });
        match literal {
            Some(addr) => {
                let mut out = self.empty();
                out.push(addr);
                Ok(out)
            }
            None => self.names.resolve(uri, config, timeout),
        }
    }
}

/// `bytes` percent-encoded for a path segment or a query value: every byte
/// but `A-Z a-z 0-9 - . _ ~` is written `%XX`.
pub fn percent_encode(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0x0F)]));
        }
    }
    out
}

/// A one-line description of a transport error talking to `addr`.
pub fn transport_error(addr: &str, e: &ureq::Error) -> RemoteError {
    let msg = match e {
        ureq::Error::Io(io) if io.kind() == io::ErrorKind::ConnectionRefused => {
            "connection refused (is sievedb-server running there?)".to_string()
        }
        ureq::Error::Io(io) => format!("{io}"),
        ureq::Error::Timeout(t) => format!("no answer in time ({t})"),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::ConnectionFailed => "connection failed".to_string(),
        other => other.to_string(),
    };
    RemoteError(format!("{addr}: {msg}"))
}

/// The `error` field of a JSON error body, or the body itself.
fn error_text(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => match m.get("error") {
            Some(Value::String(s)) => s.clone(),
            _ => Value::Object(m).to_string(),
        },
        _ => {
            // One line, and not a page of HTML.
            let text = String::from_utf8_lossy(body);
            let line: Vec<&str> = text.split_whitespace().collect();
            if line.is_empty() {
                return "(empty body)".to_string();
            }
            line.join(" ").chars().take(300).collect()
        }
    }
}

/// A one-line description of an unexpected answer `status` with `body`
/// from `addr`.
pub fn status_error(addr: &str, status: u16, body: &[u8]) -> RemoteError {
    let msg = match status {
        421 => {
            let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            match (&v["leader_id"], &v["leader_addr"]) {
                (Value::Null, _) | (_, Value::Null) => {
                    "not the leader, and no leader is known yet (421); retry shortly".to_string()
                }
                (id, Value::String(a)) => {
                    format!("not the leader (421): the leader is node {id} at {a}; use --addr {a}")
                }
                (id, a) => format!("not the leader (421): the leader is node {id} at {a}"),
            }
        }
        503 => format!("unavailable (503): {}", error_text(body)),
        400 => format!("bad request (400): {}", error_text(body)),
        s => format!("HTTP {s}: {}", error_text(body)),
    };
    RemoteError(format!("{addr}: {msg}"))
}

/// A node's answer: its status and body.
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The whole body.
    pub body: Vec<u8>,
}

/// Reads the whole body of `resp` (so that its connection is reused).
fn answer(addr: &str, mut resp: ureq::http::Response<ureq::Body>) -> Result<Answer, RemoteError> {
    let status = resp.status().as_u16();
    let body = resp
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_vec()
        .map_err(|e| transport_error(addr, &e))?;
    Ok(Answer { status, body })
}

/// A key and its value.
pub type KeyValue = (Vec<u8>, Vec<u8>);

/// One node of a cluster, by address, over one agent.
pub struct Client {
    agent: ureq::Agent,
    addr: String,
}

impl Client {
    /// A client of the node at `addr` (`HOST:PORT`, or an `http://` URL).
    pub fn new(addr: &str, timeout: Duration) -> Client {
        Client::with_agent(addr, agent(timeout))
    }

    /// A client of the node at `addr` over `agent`.
    pub fn with_agent(addr: &str, agent: ureq::Agent) -> Client {
        let addr = addr
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        Client { agent, addr }
    }

    /// The node's address, `HOST:PORT`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// `GET path`.
    pub fn get_raw(&self, path: &str) -> Result<Answer, RemoteError> {
        let resp = self.agent.get(self.url(path)).call();
        answer(
            &self.addr,
            resp.map_err(|e| transport_error(&self.addr, &e))?,
        )
    }

    /// `PUT path` with `body`.
    pub fn put_raw(&self, path: &str, body: &[u8]) -> Result<Answer, RemoteError> {
        let resp = self
            .agent
            .put(self.url(path))
            .content_type("application/octet-stream")
            .send(body);
        answer(
            &self.addr,
            resp.map_err(|e| transport_error(&self.addr, &e))?,
        )
    }

    /// `DELETE path`.
    pub fn delete_raw(&self, path: &str) -> Result<Answer, RemoteError> {
        let resp = self.agent.delete(self.url(path)).call();
        answer(
            &self.addr,
            resp.map_err(|e| transport_error(&self.addr, &e))?,
        )
    }

    /// `POST path` with the JSON `body`.
    pub fn post_json(&self, path: &str, body: &Value) -> Result<Answer, RemoteError> {
        let resp = self
            .agent
            .post(self.url(path))
            .content_type("application/json")
            .send(body.to_string().as_bytes());
        answer(
            &self.addr,
            resp.map_err(|e| transport_error(&self.addr, &e))?,
        )
    }

    /// `body` when `a` is 200, else the error it stands for.
    fn ok(&self, a: Answer) -> Result<Vec<u8>, RemoteError> {
        if a.status == 200 {
            Ok(a.body)
        } else {
            Err(status_error(&self.addr, a.status, &a.body))
        }
    }

    /// The value of `key` (`None` on 404); `stale` reads the node's own copy.
    pub fn get(&self, key: &[u8], stale: bool) -> Result<Option<Vec<u8>>, RemoteError> {
        let mut path = format!("/kv/{}", percent_encode(key));
        if stale {
            path.push_str("?consistency=stale");
        }
        let a = self.get_raw(&path)?;
        if a.status == 404 {
            return Ok(None);
        }
        self.ok(a).map(Some)
    }

    /// Sets `key` to `value` (once committed and applied).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), RemoteError> {
        let a = self.put_raw(&format!("/kv/{}", percent_encode(key)), value)?;
        self.ok(a).map(drop)
    }

    /// Deletes `key` (absent keys included).
    pub fn delete(&self, key: &[u8]) -> Result<(), RemoteError> {
        let a = self.delete_raw(&format!("/kv/{}", percent_encode(key)))?;
        self.ok(a).map(drop)
    }

    /// The pairs whose key starts with `prefix`, at most `limit`, in key order.
    pub fn scan(
        &self,
        prefix: &[u8],
        limit: Option<usize>,
        stale: bool,
    ) -> Result<Vec<KeyValue>, RemoteError> {
        let mut query = vec![format!("prefix={}", percent_encode(prefix))];
        if let Some(n) = limit {
            query.push(format!("limit={n}"));
        }
        if stale {
            query.push("consistency=stale".to_string());
        }
        let body = self.ok(self.get_raw(&format!("/kv?{}", query.join("&")))?)?;
        let bad =
            |what: &str| RemoteError(format!("{}: unexpected scan answer: {what}", self.addr));
        let v: Value = serde_json::from_slice(&body).map_err(|e| bad(&e.to_string()))?;
        let kvs = v["kvs"].as_array().ok_or_else(|| bad("no `kvs` array"))?;
        let field = |kv: &Value, name: &str| -> Result<Vec<u8>, RemoteError> {
            let s = kv[name]
                .as_str()
                .ok_or_else(|| bad(&format!("no `{name}` string")))?;
            B64.decode(s).map_err(|e| bad(&format!("{name}: {e}")))
        };
        kvs.iter()
            .map(|kv| Ok((field(kv, "key")?, field(kv, "value")?)))
            .collect()
    }

    /// `GET /cluster/status`, parsed.
    pub fn status(&self) -> Result<Value, RemoteError> {
        let body = self.ok(self.get_raw("/cluster/status")?)?;
        serde_json::from_slice(&body)
            .map_err(|e| RemoteError(format!("{}: unexpected status answer: {e}", self.addr)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_encodes_every_reserved_byte() {
        assert_eq!(percent_encode(b"abc-._~09"), "abc-._~09");
        assert_eq!(percent_encode(b"a/b c%&=?+"), "a%2Fb%20c%25%26%3D%3F%2B");
        assert_eq!(percent_encode(&[0, 0xFF]), "%00%FF");
        assert_eq!(percent_encode(b""), "");
    }

    #[test]
    fn status_errors_are_one_line() {
        let e = status_error(
            "h:1",
            421,
            br#"{"leader_id": 2, "leader_addr": "127.0.0.1:7002"}"#,
        );
        assert_eq!(
            e.0,
            "h:1: not the leader (421): the leader is node 2 at 127.0.0.1:7002; use --addr 127.0.0.1:7002"
        );
        let e = status_error("h:1", 421, br#"{"leader_id": null, "leader_addr": null}"#);
        assert!(e.0.contains("no leader is known"), "{e}");
        let e = status_error("h:1", 503, br#"{"error": "no answer within 5000 ms"}"#);
        assert_eq!(e.0, "h:1: unavailable (503): no answer within 5000 ms");
        let e = status_error("h:1", 400, b"plain\n");
        assert_eq!(e.0, "h:1: bad request (400): plain");
        assert!(!status_error("h:1", 500, b"a\nb").0.is_empty());
    }

    #[test]
    fn connection_refused_is_named() {
        // A port just released: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = Client::new(&format!("127.0.0.1:{port}"), Duration::from_secs(5));
        let e = c.get(b"k", false).unwrap_err();
        assert!(e.0.contains("connection refused"), "{e}");
    }

    #[test]
    fn ip_literals_resolve_without_a_lookup() {
        use ureq::unversioned::resolver::Resolver;
        let r = LiteralResolver::default();
        let config = ureq::config::Config::default();
        let timeout = ureq::unversioned::transport::NextTimeout {
            after: ureq::unversioned::transport::time::Duration::Exact(Duration::from_secs(5)),
            ..Default::default()
        };
        let resolve = |u: &str| -> Vec<std::net::SocketAddr> {
            let uri: ureq::http::Uri = u.parse().unwrap();
            r.resolve(&uri, &config, timeout).unwrap().to_vec()
        };
        assert_eq!(
            resolve("http://127.0.0.1:7001/kv/a"),
            ["127.0.0.1:7001".parse().unwrap()]
        );
        assert_eq!(
            resolve("http://[::1]:7002/health"),
            ["[::1]:7002".parse().unwrap()]
        );
        // A name still goes through the system's resolver.
        assert!(resolve("http://localhost:7003/")
            .iter()
            .all(|a| a.port() == 7003 && a.ip().is_loopback()));
    }
}
