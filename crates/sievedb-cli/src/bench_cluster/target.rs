//! The two systems `bench-cluster` drives, each through its HTTP API:
//! `sievedb-server` (`PUT|GET /kv/{key}`) and etcd 3.4's JSON gateway
//! (`POST /v3/kv/put`, `POST /v3/kv/range`, linearizable by default).

use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};

use crate::remote::http::{self, percent_encode, status_error, Client, RemoteError};

/// Which system the endpoints serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// `sievedb-server` nodes.
    Sievedb,
    /// etcd 3.4 members (their client URLs).
    Etcd,
}

impl Target {
    /// Its name in the output.
    pub fn name(self) -> &'static str {
        match self {
            Target::Sievedb => "sievedb",
            Target::Etcd => "etcd",
        }
    }
}

/// One client's persistent connection to one endpoint.
pub struct Conn {
    target: Target,
    client: Client,
}

impl Conn {
    /// A connection (made on first use, then kept alive) to `addr`.
    pub fn new(target: Target, addr: &str, timeout: Duration) -> Conn {
        Conn {
            target,
            client: Client::with_agent(addr, http::agent(timeout)),
        }
    }

    /// The endpoint's address.
    pub fn addr(&self) -> &str {
        self.client.addr()
    }

    /// A cheap request that opens the connection (`GET /health`).
    pub fn warm_up(&self) -> Result<(), RemoteError> {
        let a = self.client.get_raw("/health")?;
        match a.status {
            200 => Ok(()),
            s => Err(status_error(self.addr(), s, &a.body)),
        }
    }

    /// Writes `key` = `value`; `Ok` once the system acknowledged it.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), RemoteError> {
        let a = match self.target {
            Target::Sievedb => self
                .client
                .put_raw(&format!("/kv/{}", percent_encode(key)), value)?,
            Target::Etcd => self.client.post_json(
                "/v3/kv/put",
                &json!({ "key": B64.encode(key), "value": B64.encode(value) }),
            )?,
        };
        match a.status {
            200 => Ok(()),
            s => Err(status_error(self.addr(), s, &a.body)),
        }
    }

    /// A linearizable read of `key`: whether it was found.
    pub fn get(&self, key: &[u8]) -> Result<bool, RemoteError> {
        match self.target {
            Target::Sievedb => {
                let a = self
                    .client
                    .get_raw(&format!("/kv/{}", percent_encode(key)))?;
                match a.status {
                    200 => Ok(true),
                    404 => Ok(false),
                    s => Err(status_error(self.addr(), s, &a.body)),
                }
            }
            Target::Etcd => {
                let a = self
                    .client
                    .post_json("/v3/kv/range", &json!({ "key": B64.encode(key) }))?;
                if a.status != 200 {
                    return Err(status_error(self.addr(), a.status, &a.body));
                }
                let v: Value = serde_json::from_slice(&a.body).map_err(|e| {
                    RemoteError(format!("{}: unexpected range answer: {e}", self.addr()))
                })?;
                Ok(v["kvs"].as_array().is_some_and(|kvs| !kvs.is_empty()))
            }
        }
    }
}

/// A JSON number or string as text (etcd writes its 64-bit ids as strings).
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() && s != "0" => Some(s.clone()),
        _ => None,
    }
}

/// The leader as seen from the endpoints: its id (sievedb's node id, etcd's
/// member id in decimal) and its client address. For sievedb, the address
/// is the one in the membership (`/cluster/status`); for etcd, the endpoint
/// whose member id is the leader's (`/v3/maintenance/status`).
pub fn find_leader(
    target: Target,
    endpoints: &[String],
    timeout: Duration,
) -> Result<(String, String), RemoteError> {
    match target {
        Target::Sievedb => sievedb_leader(endpoints, timeout),
        Target::Etcd => etcd_leader(endpoints, timeout),
    }
}

fn sievedb_leader(
    endpoints: &[String],
    timeout: Duration,
) -> Result<(String, String), RemoteError> {
    let mut last = RemoteError("no endpoints".to_string());
    for ep in endpoints {
        let s = match Client::new(ep, timeout).status() {
            Ok(s) => s,
            Err(e) if e.0.contains("HTTP 404") => {
                last = RemoteError(format!(
                    "{e} for GET /cluster/status: is {ep} a sievedb-server node?"
                ));
                continue;
            }
            Err(e) => {
                last = e;
                continue;
            }
        };
        let Some(id) = id_text(&s["leader_id"]) else {
            last = RemoteError(format!("{ep}: no leader known yet"));
            continue;
        };
        match s["members"][id.as_str()].as_str() {
            Some(addr) => return Ok((id, addr.to_string())),
            None => last = RemoteError(format!("{ep}: leader {id} is not in the members")),
        }
    }
    Err(last)
}

fn etcd_leader(endpoints: &[String], timeout: Duration) -> Result<(String, String), RemoteError> {
    let mut last = RemoteError("no endpoints".to_string());
    let mut leader = None;
    for ep in endpoints {
        let c = Client::new(ep, timeout);
        let a = match c.post_json("/v3/maintenance/status", &json!({})) {
            Ok(a) if a.status == 200 => a,
            Ok(a) => {
                let e = status_error(ep, a.status, &a.body);
                last = if a.status == 404 {
                    RemoteError(format!(
                        "{e} for POST /v3/maintenance/status: is {ep} an etcd 3.4 client URL?"
                    ))
                } else {
                    e
                };
                continue;
            }
            Err(e) => {
                last = e;
                continue;
            }
        };
        let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
        let me = id_text(&v["header"]["member_id"]);
        let lead = id_text(&v["leader"]);
        if let (Some(me), Some(lead)) = (&me, &lead) {
            if me == lead {
                return Ok((me.clone(), ep.clone()));
            }
        }
        leader = leader.or(lead);
    }
    Err(match leader {
        Some(id) => RemoteError(format!(
            "the etcd leader (member {id}) is none of the endpoints {}",
            endpoints.join(",")
        )),
        None => last,
    })
}
