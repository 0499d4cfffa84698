//! `sievedb`: the command-line tool of the sievedb key-value store.
//!
//! Keys and values on the command line and in the shell use `%XX` escapes for
//! arbitrary bytes and `""` for the empty string (see [`escape`]). Without a
//! subcommand, `sievedb` runs the default benchmark (`sievedb bench`).

// Never unwraps outside tests: it returns an error; an `expect` states the
// invariant that rules the error out, in an `#[expect(clippy::expect_used,
// reason = "..")]`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod bench_cluster;
mod bulkload;
mod commands;
mod escape;
mod keyspaces;
mod remote;
mod shell;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use commands::{parse_escaped, Escaped, PutValue};

/// Command-line interface of the sievedb key-value store.
#[derive(Parser, Debug)]
#[command(
    name = "sievedb",
    version,
    about = "sievedb key-value store: get/put/delete/scan/stats/keyspaces/shell, bulk load, and db_bench-style benchmarks",
    long_about = "sievedb key-value store.\n\n\
        Keys and values are written with `%XX` escapes (two hex digits) for arbitrary bytes and \
        `\"\"` for the empty string; output uses the same escaping.\n\
        Without a subcommand, runs the default benchmark (same as `sievedb bench`)."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// A key range `[FROM, TO)` of the command line (`scan`, `compact`).
#[derive(clap::Args, Debug)]
struct KeyRange {
    /// First key (inclusive, escaped)
    #[arg(long, value_name = "KEY", value_parser = parse_escaped)]
    from: Option<Escaped>,
    /// End key (exclusive, escaped)
    #[arg(long, value_name = "KEY", value_parser = parse_escaped)]
    to: Option<Escaped>,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
enum Command {
    /// Print the value of KEY (exit status 1 and `not found` on stderr if missing)
    Get {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Keyspace to read (must exist; default: the default keyspace)
        #[arg(long, value_name = "NAME")]
        keyspace: Option<String>,
        /// Key (escaped)
        #[arg(value_parser = parse_escaped)]
        key: Escaped,
    },
    /// Set KEY to VALUE (creates the database if DIR is missing or empty)
    Put {
        /// Database directory (created if missing; an existing directory must be
        /// empty or hold a database)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Keyspace to write (default: the default keyspace). It must exist, as
        /// with ldb's --column_family: put never creates a keyspace, so a mistyped
        /// name is an error; `create-keyspace` creates one. With a keyspace other
        /// than `default`, the database must exist too
        #[arg(long, value_name = "NAME")]
        keyspace: Option<String>,
        /// Key (escaped)
        #[arg(value_parser = parse_escaped)]
        key: Escaped,
        #[command(flatten)]
        value: PutValue,
    },
    /// Delete KEY
    Delete {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Keyspace to delete from (must exist, as for put; default: the default
        /// keyspace)
        #[arg(long, value_name = "NAME")]
        keyspace: Option<String>,
        /// Key (escaped)
        #[arg(value_parser = parse_escaped)]
        key: Escaped,
    },
    /// Print `KEY VALUE` lines in key order, FROM inclusive, TO exclusive
    Scan {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Keyspace to scan (must exist; default: the default keyspace)
        #[arg(long, value_name = "NAME")]
        keyspace: Option<String>,
        #[command(flatten)]
        range: KeyRange,
        /// Print at most N entries
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// Compact the keys in [FROM, TO) down to the deepest level holding data (ldb's compact)
    ///
    /// Flushes the memtables, then merges every file of the keyspace that
    /// overlaps the range into the deepest non-empty level, dropping
    /// overwritten and deleted entries (`Db::compact_range`); without --from
    /// and --to, every key. Prints the keyspace's files per level before and
    /// after. As every command here, it opens the database with the default
    /// options, so the files it writes have the default filter and block
    /// settings (the files it does not rewrite keep theirs).
    Compact {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Keyspace to compact (must exist, as for put; default: the default
        /// keyspace)
        #[arg(long, value_name = "NAME")]
        keyspace: Option<String>,
        #[command(flatten)]
        range: KeyRange,
    },
    /// Print per-level shape and engine counters
    ///
    /// The level shape is the database's; the operation counters (gets, puts,
    /// reads, writes, compactions, ...) are per process: they start at zero when
    /// this command opens the database, so here they show only what opening it
    /// did. The shell's `stats` shows a session's counts.
    ///
    /// Without --keyspace, the levels are every keyspace's together, and a table
    /// (`keyspaces` in the JSON) gives each keyspace's files, bytes, entries and
    /// memtable bytes. With --keyspace NAME, the levels are that keyspace's.
    Stats {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Print the levels of this keyspace only (must exist)
        #[arg(long, value_name = "NAME")]
        keyspace: Option<String>,
        /// Print the statistics as one JSON line
        #[arg(long)]
        json: bool,
    },
    /// List the keyspaces, one name per line, sorted (`default` among them)
    Keyspaces {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Print the names as one JSON array
        #[arg(long)]
        json: bool,
    },
    /// Create keyspace NAME (ldb's create_column_family); an existing one is an error
    ///
    /// The keyspace gets the database's options. The database is created if DIR is
    /// missing or empty, as by `put`.
    CreateKeyspace {
        /// Database directory (created if missing; an existing directory must be
        /// empty or hold a database)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Name of the new keyspace (1 to 255 bytes)
        name: String,
    },
    /// Drop keyspace NAME and all its keys (ldb's drop_column_family)
    ///
    /// The drop is durable when the command returns; the keyspace's files are
    /// deleted. The default keyspace cannot be dropped.
    DropKeyspace {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Name of the keyspace to drop
        name: String,
    },
    /// Write an openable copy of the database to a new directory
    ///
    /// SST files are hard linked where the file system allows (copied otherwise); the
    /// memtables are flushed first, so the copy holds every write made before. OUT must
    /// not exist or be empty.
    Checkpoint {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Directory to create the checkpoint in
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Rebuild a lost or damaged MANIFEST from the SSTs and WALs in DIR
    ///
    /// The database must be closed. Every readable entry is merged by sequence number
    /// into one run of the last level, keeping the newest version of each key; damaged
    /// SSTs and WALs, and the replaced MANIFESTs, are moved to DIR/lost/ (every intact
    /// block of a damaged SST is kept). Prints what was read, lost and written: each
    /// damaged SST, and each SST the MANIFEST lists that is missing, with what it held
    /// (entries, key range, keyspace, level) and how much of it was salvaged.
    Repair {
        /// Database directory (must exist)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Print the report as one JSON line
        #[arg(long)]
        json: bool,
    },
    /// Read commands from stdin, one per line, and answer each on stdout
    ///
    /// Commands and answers (keys and values escaped; `-` = unbounded scan bound);
    /// put, get, del, batch, scan and compact act on the keyspace in use
    /// (`default` at the start):
    ///   put K V                      -> OK
    ///   get K                        -> the value, or (nil)
    ///   del K                        -> OK
    ///   batch put K V del K ...      -> OK (one atomic write batch)
    ///   scan FROM TO                 -> `K V` lines, then END (FROM inclusive, TO exclusive)
    ///   flush                        -> OK
    ///   compact                      -> OK
    ///   stats                        -> one JSON line (counters of this process only)
    ///   keyspaces                    -> one name per line, then END
    ///   use NAME                     -> OK (NAME, which must exist, is now in use)
    ///   create-keyspace NAME         -> OK (a new keyspace; `use` it to write there)
    ///   drop-keyspace NAME           -> OK (not the keyspace in use, not default)
    ///   begin [optimistic|pessimistic] [snapshot|serializable]
    ///                                -> OK (put/get/del/scan go into the transaction)
    ///   get-for-update K             -> the value, or (nil) (a transaction's read that
    ///                                   a commit by someone else since fails)
    ///   savepoint                    -> OK
    ///   rollback-to-savepoint        -> OK (the writes since the savepoint are undone)
    ///   commit                       -> OK once durable; a conflict answers ERR and rolls back
    ///   rollback                     -> OK (the transaction's writes are dropped)
    ///   help                         -> one line per command, then END
    ///   quit | exit                  -> BYE, and the shell ends
    /// Anything wrong answers `ERR <message>` and the shell goes on.
    /// Every answer is flushed once the engine acknowledged the write; EOF ends the shell too.
    #[command(verbatim_doc_comment)]
    Shell {
        /// Database directory (created if missing; an existing directory must be
        /// empty or hold a database)
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Sync the WAL before acknowledging each write
        #[arg(long)]
        sync: bool,
    },
    /// Build a new database of full levels directly from sorted entries
    ///
    /// Entries are the keys and values the fill benchmarks write (--num, --key-size,
    /// --value-size, --seed) or sorted `KEY<TAB>VALUE` lines of --input. Level i of
    /// 1..=L receives a share proportional to T^(i-1), interleaved over the whole key
    /// range; L0 stays empty. Prints files, entries and bytes per level, and the
    /// level1_size/size_ratio to open the database with. The tables get the filters
    /// the filter flags ask for (the same flags as `bench`: --bits-per-key, --filter,
    /// --filter-units, --hash, ...).
    Bulkload(bulkload::BulkloadArgs),
    /// Ask a running sievedb-server node: get, put, delete, scan, status (over HTTP)
    ///
    /// Keys and values are escaped as in the local commands. --addr (default
    /// 127.0.0.1:7001, node 1 of scripts/cluster.sh) may be any node: a
    /// follower forwards to the leader. Errors (connection refused, 503 without
    /// a quorum, 421 naming the leader, 400) are one line and exit status 1.
    Remote(remote::RemoteArgs),
    /// Closed-loop load on a sievedb-server or etcd 3.4 cluster over HTTP
    ///
    /// N client threads (each point of --clients in turn), each with one
    /// persistent connection, send puts or linearizable gets of --value-size
    /// byte values over --keys keys for --seconds. Prints ops/s, p50/p99/max
    /// latency, errors and (with --io-pids) bytes written to storage per put;
    /// --failover-probe SIGKILLs the leader and reports the ms until the next
    /// acknowledged write. A table goes to stderr, CSV rows to stdout, --csv
    /// and --json to files. scripts/bench-cluster.sh runs it against both.
    BenchCluster(Box<bench_cluster::BenchClusterArgs>),
    /// Run db_bench-style benchmarks (the default when no subcommand is given)
    Bench(Box<sievedb_bench::BenchArgs>),
    /// Reproduce a table or figure of the papers: CSV, SVG/PNG plot and a Markdown summary
    ///
    /// NAME is an experiment (`sievedb experiment list`), several separated by
    /// commas (run in one process, so `elastic-table1,elastic-fig5` measure once),
    /// `all` (every experiment, then docs/reproduction.md) or `list`. Outputs go to
    /// --out (default ./experiments-out/<name>; DIR/<name> for several); progress
    /// goes to stderr.
    Experiment(sievedb_bench::experiment::ExperimentArgs),
    /// Measure this machine's Table 1: 4 KiB read latency per access mode and hash cost
    ///
    /// Read modes (random 4 KiB-aligned reads through sievedb's file layer): memory
    /// (a 4 KiB copy), buffered (page cache, file warmed), direct (O_DIRECT, the
    /// papers' SSD(D); "unsupported" where the file system refuses it), tmpfs
    /// (/dev/shm, the emulated NVM), and emulated-<delay> (the buffered read plus
    /// the busy wait `bench --io-delay-ns` adds). Hash cost: ns per key digest for
    /// every filter hash function at key sizes 8..1024 B (median of runs).
    Devices(sievedb_bench::devices::DevicesArgs),
}

fn run(command: Command) -> commands::CmdResult {
    match command {
        Command::Get { db, keyspace, key } => commands::get(&db, keyspace.as_deref(), &key),
        Command::Put {
            db,
            keyspace,
            key,
            value,
        } => commands::put(&db, keyspace.as_deref(), &key, &value),
        Command::Delete { db, keyspace, key } => commands::delete(&db, keyspace.as_deref(), &key),
        Command::Scan {
            db,
            keyspace,
            range,
            limit,
        } => commands::scan(
            &db,
            keyspace.as_deref(),
            range.from.as_ref(),
            range.to.as_ref(),
            limit,
        ),
        Command::Compact {
            db,
            keyspace,
            range,
        } => commands::compact(
            &db,
            keyspace.as_deref(),
            range.from.as_ref(),
            range.to.as_ref(),
        ),
        Command::Stats { db, keyspace, json } => commands::stats(&db, keyspace.as_deref(), json),
        Command::Keyspaces { db, json } => keyspaces::keyspaces(&db, json),
        Command::CreateKeyspace { db, name } => keyspaces::create_keyspace(&db, &name),
        Command::DropKeyspace { db, name } => keyspaces::drop_keyspace(&db, &name),
        Command::Checkpoint { db, out } => commands::checkpoint(&db, &out),
        Command::Repair { db, json } => commands::repair(&db, json),
        Command::Shell { db, sync } => commands::shell(&db, sync),
        Command::Bulkload(args) => bulkload::bulkload(&args),
        Command::Remote(args) => remote::run(&args),
        Command::BenchCluster(args) => bench_cluster::run(&args),
        Command::Bench(args) => bench(&args),
        Command::Experiment(args) => {
            sievedb_bench::experiment::run(&args)
                .map_err(|e| -> Box<dyn std::error::Error> { e })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Devices(args) => {
            sievedb_bench::devices::run(&args, &mut std::io::stdout().lock())
                .map_err(|e| -> Box<dyn std::error::Error> { e })?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The single call site of the benchmark crate.
fn bench(args: &sievedb_bench::BenchArgs) -> commands::CmdResult {
    sievedb_bench::run(args)?;
    Ok(ExitCode::SUCCESS)
}

/// The command-line definition, with the benchmark list in `bench --help`
/// (built at run time from the benchmark table).
fn cli_command() -> clap::Command {
    Cli::command().mut_subcommand("bench", sievedb_bench::with_benchmark_list)
}

/// Parses the process arguments against [`cli_command`].
fn parse_args() -> Cli {
    let matches = cli_command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Whether an error is a closed stdout (e.g. `sievedb scan ... | head`).
fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

fn main() -> ExitCode {
    // Usage errors exit with status 2, --help/--version with 0 (clap's behaviour).
    let cli = parse_args();
    // No subcommand: the default benchmark, exactly as `sievedb bench`.
    let command = cli
        .command
        .unwrap_or_else(|| Command::Bench(Box::default()));
    match run(command) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        cli_command().debug_assert();
    }

    #[test]
    fn bench_help_lists_every_benchmark() {
        let mut cmd = cli_command();
        let help = cmd
            .find_subcommand_mut("bench")
            .expect("bench")
            .render_help()
            .to_string();
        for b in sievedb_bench::bench::Benchmark::ALL {
            assert!(
                help.lines()
                    .any(|l| l.split_whitespace().next() == Some(b.name())
                        && l.contains(b.description())),
                "{} missing from:\n{help}",
                b.name()
            );
        }
    }

    #[test]
    fn put_takes_a_value_or_a_value_file_not_both() {
        let parse = |args: &[&str]| {
            let mut v = vec!["sievedb", "put", "--db", "d", "k"];
            v.extend_from_slice(args);
            Cli::try_parse_from(v)
        };
        match parse(&["--value-file", "-"]).unwrap().command {
            Some(Command::Put { value, .. }) => {
                assert!(value.value.is_none());
                assert_eq!(value.value_file.as_deref(), Some(std::path::Path::new("-")));
            }
            other => panic!("unexpected {other:?}"),
        }
        let e = parse(&["v", "--value-file", "f"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict);
        let e = parse(&[]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn parses_escaped_arguments() {
        let cli = Cli::try_parse_from(["sievedb", "put", "--db", "d", "a%00b", "\"\""]).unwrap();
        match cli.command {
            Some(Command::Put { key, value, .. }) => {
                assert_eq!(key.0, b"a\0b");
                assert_eq!(value.value.map(|v| v.0), Some(Vec::new()));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(Cli::try_parse_from(["sievedb", "get", "--db", "d", "%G1"]).is_err());
    }

    #[test]
    fn parses_keyspace_flags_and_commands() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|c| c.command);
        match parse(&["sievedb", "get", "--db", "d", "--keyspace", "users", "k"]) {
            Ok(Some(Command::Get { keyspace, key, .. })) => {
                assert_eq!(keyspace.as_deref(), Some("users"));
                assert_eq!(key.0, b"k");
            }
            other => panic!("unexpected {other:?}"),
        }
        match parse(&["sievedb", "put", "--db", "d", "k", "v"]) {
            Ok(Some(Command::Put { keyspace, .. })) => assert_eq!(keyspace, None),
            other => panic!("unexpected {other:?}"),
        }
        for cmd in ["put", "delete", "scan", "stats"] {
            let mut args = vec!["sievedb", cmd, "--db", "d", "--keyspace", "ks"];
            if cmd == "put" {
                args.extend(["k", "v"]);
            } else if cmd == "delete" {
                args.push("k");
            }
            let keyspace = match parse(&args) {
                Ok(Some(
                    Command::Put { keyspace, .. }
                    | Command::Delete { keyspace, .. }
                    | Command::Scan { keyspace, .. }
                    | Command::Stats { keyspace, .. },
                )) => keyspace,
                other => panic!("{cmd}: unexpected {other:?}"),
            };
            assert_eq!(keyspace.as_deref(), Some("ks"), "{cmd}");
        }
        match parse(&["sievedb", "keyspaces", "--db", "d", "--json"]) {
            Ok(Some(Command::Keyspaces { json, .. })) => assert!(json),
            other => panic!("unexpected {other:?}"),
        }
        match parse(&["sievedb", "create-keyspace", "--db", "d", "users"]) {
            Ok(Some(Command::CreateKeyspace { name, .. })) => assert_eq!(name, "users"),
            other => panic!("unexpected {other:?}"),
        }
        match parse(&["sievedb", "drop-keyspace", "--db", "d", "users"]) {
            Ok(Some(Command::DropKeyspace { name, .. })) => assert_eq!(name, "users"),
            other => panic!("unexpected {other:?}"),
        }
        for bad in [
            &["sievedb", "get", "--db", "d", "--keyspace"][..],
            &["sievedb", "drop-keyspace", "--db", "d"],
            &["sievedb", "create-keyspace", "--db", "d", "a", "b"],
            &["sievedb", "bulkload", "d", "--keyspace", "ks"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parses_experiment_flags() {
        let cli = Cli::try_parse_from([
            "sievedb",
            "experiment",
            "fig5a",
            "--scale",
            "paper",
            "--out",
            "o",
            "--repeats",
            "2",
            "--json",
            "--distribution",
            "zipfian",
            "--zipf-s",
            "1.2",
            "--background-threads",
            "3",
        ])
        .unwrap();
        match cli.command {
            Some(Command::Experiment(a)) => {
                assert_eq!(a.name, "fig5a");
                assert_eq!(a.scale, sievedb_bench::experiment::Scale::Paper);
                assert_eq!(a.out.as_deref(), Some(std::path::Path::new("o")));
                assert_eq!(a.repeats, Some(2));
                assert!(a.json);
                assert_eq!(a.zipf_s, 1.2);
                assert_eq!(a.background_threads, 3);
            }
            other => panic!("unexpected {other:?}"),
        }
        let a = match Cli::try_parse_from(["sievedb", "experiment", "all"])
            .unwrap()
            .command
        {
            Some(Command::Experiment(a)) => a,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(a, sievedb_bench::experiment::ExperimentArgs::new("all"));
        assert!(Cli::try_parse_from(["sievedb", "experiment", "x", "--scale", "huge"]).is_err());
        for bad in ["0", "65", "x"] {
            let argv = ["sievedb", "experiment", "x", "--background-threads", bad];
            assert!(Cli::try_parse_from(argv).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_devices() {
        match Cli::try_parse_from(["sievedb", "devices"]).unwrap().command {
            Some(Command::Devices(a)) => {
                assert_eq!(a, sievedb_bench::devices::DevicesArgs::default())
            }
            other => panic!("unexpected {other:?}"),
        }
        match Cli::try_parse_from([
            "sievedb", "devices", "--quick", "--json", "--dir", "/tmp", "--csv", "t1.csv",
        ])
        .unwrap()
        .command
        {
            Some(Command::Devices(a)) => {
                assert!(a.quick && a.json);
                assert_eq!(a.csv.as_deref(), Some(std::path::Path::new("t1.csv")));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(Cli::try_parse_from(["sievedb", "devices", "--reads", "x"]).is_err());
    }

    #[test]
    fn no_subcommand_means_default_bench() {
        assert!(Cli::try_parse_from(["sievedb"]).unwrap().command.is_none());
        match Cli::try_parse_from(["sievedb", "bench"]).unwrap().command {
            Some(Command::Bench(args)) => assert_eq!(*args, sievedb_bench::BenchArgs::default()),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// `(long name, defaults, value names, takes a value)` of every flag of
    /// subcommand `name` that [`sievedb_bench::FilterArgs`] defines.
    fn filter_flags_of(name: &str) -> Vec<(String, Vec<String>, Vec<String>, bool)> {
        use clap::Args;
        let shared = sievedb_bench::FilterArgs::augment_args(clap::Command::new("x"));
        let longs: Vec<&str> = shared
            .get_arguments()
            .filter_map(|a| a.get_long())
            .collect();
        let cmd = Cli::command();
        let sub = cmd.find_subcommand(name).expect("subcommand");
        let mut flags: Vec<_> = sub
            .get_arguments()
            .filter(|a| a.get_long().is_some_and(|l| longs.contains(&l)))
            .map(|a| {
                let strs = |v: &[&std::ffi::OsStr]| -> Vec<String> {
                    v.iter().map(|s| s.to_string_lossy().into_owned()).collect()
                };
                (
                    a.get_long().unwrap().to_string(),
                    strs(
                        &a.get_default_values()
                            .iter()
                            .map(|v| v.as_os_str())
                            .collect::<Vec<_>>(),
                    ),
                    a.get_value_names()
                        .map_or(Vec::new(), |v| v.iter().map(|n| n.to_string()).collect()),
                    a.get_action().takes_values(),
                )
            })
            .collect();
        flags.sort();
        assert_eq!(flags.len(), longs.len(), "{name} lacks filter flags");
        flags
    }

    #[test]
    fn bench_and_bulkload_take_the_same_filter_flags() {
        let bench = filter_flags_of("bench");
        assert_eq!(bench, filter_flags_of("bulkload"));
        for needed in [
            "bits-per-key",
            "filter",
            "filter-units",
            "hash",
            "index-scheme",
            "secondary-hash",
            "unit-hashing",
            "num-probes",
            "leveldb-probes",
            "memtable-filter",
            "hash-sharing",
            "filter-memory-bits-per-key",
            "filter-memory-bytes",
        ] {
            assert!(bench.iter().any(|f| f.0 == needed), "--{needed} missing");
        }
        let bpk = bench.iter().find(|f| f.0 == "bits-per-key").unwrap();
        assert_eq!(bpk.1, ["10"]);

        let flags = [
            "--filter",
            "units",
            "--filter-units",
            "6",
            "--bits-per-key",
            "12",
            "--hash",
            "xxh3",
            "--filter-memory-bytes",
            "65536",
        ];
        let mut bulk = vec!["sievedb", "bulkload", "db"];
        bulk.extend_from_slice(&flags);
        let mut bench = vec!["sievedb", "bench"];
        bench.extend_from_slice(&flags);
        let from_bulk = match Cli::try_parse_from(bulk).unwrap().command {
            Some(Command::Bulkload(a)) => a.filters,
            other => panic!("unexpected {other:?}"),
        };
        let from_bench = match Cli::try_parse_from(bench).unwrap().command {
            Some(Command::Bench(a)) => a.filters,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(from_bulk, from_bench);
        assert_eq!(from_bulk.filter_options().units, 6);
        assert_eq!(
            from_bulk.filter_memory(),
            sievedb::FilterMemory::Bytes(65536)
        );
    }

    #[test]
    fn filter_memory_flags_exclude_each_other_in_both_commands() {
        let both = [
            "--filter-memory-bits-per-key",
            "4",
            "--filter-memory-bytes",
            "100",
        ];
        for cmd in [vec!["sievedb", "bench"], vec!["sievedb", "bulkload", "db"]] {
            let mut args = cmd.clone();
            args.extend_from_slice(&both);
            let e = Cli::try_parse_from(args).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict);
            for bad in ["-2", "NaN"] {
                let mut args = cmd.clone();
                args.extend_from_slice(&["--filter-memory-bits-per-key", bad]);
                let e = Cli::try_parse_from(args).unwrap_err().to_string();
                assert!(e.contains("between 0 and"), "{bad}: {e}");
            }
        }
    }
}
