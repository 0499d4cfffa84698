//! `sievedb remote get|put|delete|scan|status`: the one-shot commands
//! against a running `sievedb-server` node over its HTTP API, with keys and
//! values escaped as in the local commands ([`crate::escape`]).

pub mod http;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use crate::commands::{self, parse_escaped, CmdResult, Escaped, PutValue};
use crate::escape;
use http::Client;

/// The node `--addr` defaults to: node 1 of `scripts/cluster.sh`.
pub const DEFAULT_ADDR: &str = "127.0.0.1:7001";

/// `sievedb remote`'s flags and subcommand.
#[derive(clap::Args, Debug)]
pub struct RemoteArgs {
    /// Address of the node to ask (any node: a follower forwards to the leader)
    #[arg(long, global = true, value_name = "HOST:PORT", default_value = DEFAULT_ADDR)]
    pub addr: String,
    /// Give up on a request after this long (the server answers 503 after its
    /// own --request-timeout-ms, 5 s by default)
    #[arg(long, global = true, value_name = "MS", default_value_t = 15_000)]
    pub timeout_ms: u64,
    /// What to do.
    #[command(subcommand)]
    pub command: RemoteCommand,
}

/// The subcommands of `sievedb remote`.
#[derive(clap::Subcommand, Debug)]
pub enum RemoteCommand {
    /// Print the value of KEY (exit status 1 and `not found` on stderr if missing)
    ///
    /// Linearizable by default (the leader confirms it still leads); --stale
    /// reads the node's own copy, which may lag.
    Get {
        /// Key (escaped)
        #[arg(value_parser = parse_escaped)]
        key: Escaped,
        /// Read the node's own state machine (`?consistency=stale`)
        #[arg(long)]
        stale: bool,
    },
    /// Set KEY to VALUE; returns once a majority committed it and the leader applied it
    Put {
        /// Key (escaped)
        #[arg(value_parser = parse_escaped)]
        key: Escaped,
        #[command(flatten)]
        value: PutValue,
    },
    /// Delete KEY (an absent key is no error)
    Delete {
        /// Key (escaped)
        #[arg(value_parser = parse_escaped)]
        key: Escaped,
    },
    /// Print `KEY VALUE` lines (escaped, as `sievedb scan`) of the keys starting with PREFIX, in key order
    Scan {
        /// Key prefix (escaped; default: every key)
        #[arg(long, value_name = "PREFIX", value_parser = parse_escaped)]
        prefix: Option<Escaped>,
        /// Print at most N entries
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        limit: Option<u64>,
        /// Read the node's own state machine (`?consistency=stale`)
        #[arg(long)]
        stale: bool,
    },
    /// Print the node's /cluster/status (leader, term, members, log indexes) as pretty JSON
    Status,
}

/// Runs `sievedb remote ...`.
pub fn run(args: &RemoteArgs) -> CmdResult {
    let client = Client::new(&args.addr, Duration::from_millis(args.timeout_ms.max(1)));
    match &args.command {
        RemoteCommand::Get { key, stale } => {
            commands::print_found(client.get(&key.0, *stale)?.as_deref())
        }
        RemoteCommand::Put { key, value } => {
            client.put(&key.0, &value.read()?)?;
            Ok(ExitCode::SUCCESS)
        }
        RemoteCommand::Delete { key } => {
            client.delete(&key.0)?;
            Ok(ExitCode::SUCCESS)
        }
        RemoteCommand::Scan {
            prefix,
            limit,
            stale,
        } => {
            let prefix = prefix.as_ref().map_or(&[][..], |p| &p.0[..]);
            let limit = limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
            let kvs = client.scan(prefix, limit, *stale)?;
            let mut out = BufWriter::new(io::stdout().lock());
            for (k, v) in kvs {
                writeln!(out, "{} {}", escape::encode(&k), escape::encode(&v))?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        RemoteCommand::Status => {
            let status = client.status()?;
            let mut out = io::stdout().lock();
            writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: RemoteArgs,
    }

    fn parse(args: &[&str]) -> Result<RemoteArgs, clap::Error> {
        let mut v = vec!["remote"];
        v.extend_from_slice(args);
        T::try_parse_from(v).map(|t| t.a)
    }

    #[test]
    fn parses_commands_and_the_address() {
        let a = parse(&["get", "k%00"]).unwrap();
        assert_eq!(a.addr, DEFAULT_ADDR);
        match a.command {
            RemoteCommand::Get { key, stale } => {
                assert_eq!(key.0, b"k\0");
                assert!(!stale);
            }
            other => panic!("unexpected {other:?}"),
        }
        // --addr before or after the subcommand.
        for args in [
            &["--addr", "h:9", "put", "k", "v"][..],
            &["put", "k", "v", "--addr", "h:9"],
        ] {
            assert_eq!(parse(args).unwrap().addr, "h:9", "{args:?}");
        }
        match parse(&["scan", "--prefix", "a%20", "--limit", "3", "--stale"])
            .unwrap()
            .command
        {
            RemoteCommand::Scan {
                prefix,
                limit,
                stale,
            } => {
                assert_eq!(prefix.map(|p| p.0), Some(b"a ".to_vec()));
                assert_eq!(limit, Some(3));
                assert!(stale);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(parse(&["scan", "--limit", "0"]).is_err());
        assert!(parse(&["put", "k"]).is_err());
        assert!(parse(&["put", "k", "v", "--value-file", "f"]).is_err());
        assert!(parse(&["get", "%G1"]).is_err());
        assert!(matches!(
            parse(&["status"]).unwrap().command,
            RemoteCommand::Status
        ));
    }
}
