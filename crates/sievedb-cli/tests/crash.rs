//! The crash test: a `sievedb shell` child is fed random writes, killed with
//! SIGKILL at a random moment, and the reopened database is checked against a
//! model of the acknowledged writes.
//!
//! Writes are answered one at a time, so the test knows exactly which writes
//! were acknowledged (`OK` read back) and which were only sent (in flight at
//! kill time). After a crash the database must hold the acknowledged state
//! plus a *prefix* of the in-flight writes (the WAL is sequential), each batch
//! applied all-or-nothing. A transaction (`begin`, its puts and deletes,
//! `commit`, in any of the four modes, across keyspaces in the keyspace
//! variant) counts as one write: acknowledged once `commit` answered `OK`,
//! in flight from its `begin` on, all or nothing like a batch. This implies
//! the per-key rule: every key shows its last acknowledged value or the value
//! of an in-flight write, never anything else, and an in-flight batch or
//! transaction is never half applied.
//!
//! `SIEVEDB_CRASH_CYCLES` (default 30) sets the number of kill/reopen cycles,
//! `SIEVEDB_CRASH_SEED` the random seed.
//!
//! The keyspace variant also writes into keyspaces `ks1` and `ks2` (`use`
//! switches, in flight too), and drops and recreates one now and then; the
//! state is then every keyspace's keys, a named keyspace's under a prefix
//! (see [`in_ks`]).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Key/value state of the database: present keys only.
type State = BTreeMap<Vec<u8>, Vec<u8>>;

/// Number of distinct keys: small, so that overwrites and deletes are frequent.
const KEYS: usize = 80;

fn key(n: usize) -> Vec<u8> {
    if n.is_multiple_of(7) {
        // Binary keys exercise the escaping of the shell protocol.
        let mut k = vec![0u8, b'b', 0xFF];
        k.extend_from_slice(format!("{n:03}").as_bytes());
        k
    } else {
        format!("key{n:03}").into_bytes()
    }
}

/// Keyspaces the keyspace variant writes to besides `default`.
const NAMED: [&str; 2] = ["ks1", "ks2"];

/// Where key `k` of keyspace `ks` sits in a [`State`]: a key of `default`
/// as it is (keys start with `k` or 0), another keyspace's after
/// `0x01 NAME 0x00`.
fn in_ks(ks: &str, k: &[u8]) -> Vec<u8> {
    if ks == "default" {
        return k.to_vec();
    }
    let mut v = vec![1];
    v.extend_from_slice(ks.as_bytes());
    v.push(0);
    v.extend_from_slice(k);
    v
}

/// The keyspace and the key of a [`State`] key (see [`in_ks`]).
fn split_ks(k: &[u8]) -> (&str, &[u8]) {
    match k.strip_prefix(&[1]) {
        Some(rest) => {
            let end = rest
                .iter()
                .position(|&b| b == 0)
                .expect("a keyspace prefix");
            let name = std::str::from_utf8(&rest[..end]).expect("a UTF-8 name");
            (name, &rest[end + 1..])
        }
        None => ("default", k),
    }
}

/// Escapes bytes for the shell (deliberately more than needed: only
/// alphanumerics are written plainly).
fn enc(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "\"\"".to_string();
    }
    let mut s = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02x}"));
        }
    }
    s
}

/// Unescapes a token of a shell answer.
fn dec(token: &str) -> Vec<u8> {
    if token == "\"\"" {
        return Vec::new();
    }
    let b = token.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).expect("hex digits");
            out.push(u8::from_str_radix(hex, 16).expect("hex escape"));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// A write sent to the shell (keys as in [`in_ks`]: of the keyspace in use).
#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
    /// Distinct keys; `Some(value)` = put, `None` = delete.
    Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    /// `use NAME`: no write, the keyspace of the writes after it.
    Use(&'static str),
    /// `begin MODE`, puts and deletes (keys of any keyspace: `use` lines in
    /// between), `commit`: all or nothing, like a batch.
    Txn(&'static str, Vec<(Vec<u8>, Option<Vec<u8>>)>),
}

impl Op {
    /// The lines it sends, each answered `OK` once done.
    fn lines(&self) -> Vec<String> {
        let Op::Txn(mode, ops) = self else {
            return vec![self.line()];
        };
        let mut lines = vec![format!("begin {mode}")];
        let mut current = None;
        for (k, v) in ops {
            let (ks, raw) = split_ks(k);
            if current != Some(ks) {
                lines.push(format!("use {ks}"));
                current = Some(ks);
            }
            lines.push(match v {
                Some(v) => format!("put {} {}", enc(raw), enc(v)),
                None => format!("del {}", enc(raw)),
            });
        }
        lines.push("commit".to_string());
        lines
    }

    /// The one line of anything but a transaction.
    fn line(&self) -> String {
        let raw = |k: &[u8]| enc(split_ks(k).1);
        match self {
            Op::Put(k, v) => format!("put {} {}", raw(k), enc(v)),
            Op::Del(k) => format!("del {}", raw(k)),
            Op::Batch(ops) => {
                let mut s = "batch".to_string();
                for (k, v) in ops {
                    match v {
                        Some(v) => s.push_str(&format!(" put {} {}", raw(k), enc(v))),
                        None => s.push_str(&format!(" del {}", raw(k))),
                    }
                }
                s
            }
            Op::Use(ks) => format!("use {ks}"),
            Op::Txn(..) => self.lines().join("; "),
        }
    }

    fn apply(&self, state: &mut State) {
        match self {
            Op::Put(k, v) => {
                state.insert(k.clone(), v.clone());
            }
            Op::Del(k) => {
                state.remove(k);
            }
            Op::Batch(ops) | Op::Txn(_, ops) => {
                for (k, v) in ops {
                    match v {
                        Some(v) => state.insert(k.clone(), v.clone()),
                        None => state.remove(k),
                    };
                }
            }
            Op::Use(_) => {}
        }
    }
}

/// Checks a recovered state against the acknowledged model and the writes in
/// flight at kill time (in sending order). Returns the state that matched.
fn verify(recovered: &State, acked: &State, in_flight: &[Op]) -> Result<State, String> {
    let mut candidate = acked.clone();
    if &candidate == recovered {
        return Ok(candidate);
    }
    for w in in_flight {
        w.apply(&mut candidate);
        if &candidate == recovered {
            return Ok(candidate);
        }
    }
    // No prefix matches: describe what is wrong, key by key.
    let mut allowed: BTreeMap<&[u8], Vec<Option<&[u8]>>> = BTreeMap::new();
    let keys: std::collections::BTreeSet<&[u8]> = acked
        .keys()
        .chain(recovered.keys())
        .map(Vec::as_slice)
        .collect();
    for k in &keys {
        allowed.insert(k, vec![acked.get(*k).map(Vec::as_slice)]);
    }
    for w in in_flight {
        let ops: Vec<(&[u8], Option<&[u8]>)> = match w {
            Op::Put(k, v) => vec![(k, Some(v))],
            Op::Del(k) => vec![(k, None)],
            Op::Batch(ops) | Op::Txn(_, ops) => ops
                .iter()
                .map(|(k, v)| (k.as_slice(), v.as_deref()))
                .collect(),
            Op::Use(_) => Vec::new(),
        };
        for (k, v) in ops {
            allowed.entry(k).or_default().push(v);
        }
    }
    let mut msg = format!(
        "recovered state matches no prefix of the {} in-flight write(s):\n",
        in_flight.len()
    );
    for (k, options) in &allowed {
        let got = recovered.get(*k).map(Vec::as_slice);
        let want = acked.get(*k).map(Vec::as_slice);
        if got != want {
            let verdict = if options.contains(&got) {
                "in-flight value"
            } else {
                "NEVER WRITTEN / LOST"
            };
            msg.push_str(&format!(
                "  key {}: recovered {:?}, last acknowledged {:?} ({verdict})\n",
                enc(k),
                got.map(String::from_utf8_lossy),
                want.map(String::from_utf8_lossy),
            ));
        }
    }
    for w in in_flight {
        msg.push_str(&format!("  in flight: {}\n", w.line()));
    }
    Err(msg)
}

/// Opens the database in-process and reads its whole state (every
/// keyspace's, see [`in_ks`]), checking that point lookups agree with the
/// scans.
fn read_back(dir: &Path) -> Result<State, String> {
    let db =
        sievedb::Db::open(dir, sievedb::Options::default()).map_err(|e| format!("reopen: {e}"))?;
    let mut state = State::new();
    for name in db.list_keyspaces() {
        let ks = db
            .keyspace(&name)
            .map_err(|e| format!("keyspace {name}: {e}"))?;
        for item in ks.iter().map_err(|e| format!("iter {name}: {e}"))? {
            let (k, v) = item.map_err(|e| format!("scan {name}: {e}"))?;
            state.insert(in_ks(&name, &k), v);
        }
        for n in 0..KEYS {
            let k = in_ks(&name, &key(n));
            let got = ks.get(key(n)).map_err(|e| format!("get: {e}"))?;
            if got.as_ref() != state.get(&k) {
                return Err(format!(
                    "get {} of {name} = {got:?} but scan shows {:?}",
                    enc(&key(n)),
                    state.get(&k)
                ));
            }
        }
    }
    db.close().map_err(|e| format!("close: {e}"))?;
    Ok(state)
}

/// A running `sievedb shell` child.
struct Shell {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Shell {
    fn spawn(dir: &Path, sync: bool) -> Shell {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sievedb"));
        cmd.arg("shell").arg("--db").arg(dir);
        if sync {
            cmd.arg("--sync");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn sievedb shell");
        let stdin = child.stdin.take().expect("child stdin");
        let stdout = BufReader::new(child.stdout.take().expect("child stdout"));
        Shell {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| self.stdin.flush())
            .expect("send a command to the shell");
    }

    fn answer(&mut self) -> String {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read an answer");
        assert!(n > 0, "the shell exited unexpectedly");
        line.trim_end_matches('\n').to_string()
    }

    /// Sends a command and returns its one-line answer.
    fn call(&mut self, line: &str) -> String {
        self.send(line);
        self.answer()
    }

    /// SIGKILL, then reap.
    fn kill(mut self) {
        self.child.kill().expect("kill the shell");
        self.child.wait().expect("reap the shell");
    }
}

/// Generates unique writes: every value carries (cycle, op index).
struct Gen {
    rng: SmallRng,
    cycle: usize,
    op: usize,
    /// The keyspace variant: writes into [`NAMED`] keyspaces too.
    keyspaces: bool,
    /// The keyspace in use in the shell (as of the last command sent).
    current: &'static str,
    /// The named keyspaces created (acknowledged).
    existing: Vec<&'static str>,
}

impl Gen {
    fn value(&mut self, tag: &str) -> Vec<u8> {
        let mut v = format!("{tag}c{}.o{}.", self.cycle, self.op).into_bytes();
        let pad = if self.rng.gen_bool(0.02) {
            self.rng.gen_range(2_000..20_000)
        } else {
            self.rng.gen_range(0..120)
        };
        v.extend((0..pad).map(|_| self.rng.gen_range(b' '..=b'~')));
        v
    }

    /// A key of the keyspace in use.
    fn random_key(&mut self) -> Vec<u8> {
        in_ks(self.current, &key(self.rng.gen_range(0..KEYS)))
    }

    /// A keyspace to use: `default` or an existing named one.
    fn pick_keyspace(&mut self) -> &'static str {
        let i = self.rng.gen_range(0..=self.existing.len());
        if i == 0 {
            "default"
        } else {
            self.existing[i - 1]
        }
    }

    fn write(&mut self) -> Op {
        self.op += 1;
        if self.keyspaces && self.rng.gen_bool(0.1) {
            self.current = self.pick_keyspace();
            return Op::Use(self.current);
        }
        match self.rng.gen_range(0..100) {
            0..=54 => {
                let k = self.random_key();
                Op::Put(k, self.value("p"))
            }
            55..=74 => Op::Del(self.random_key()),
            75..=87 => self.txn(),
            _ => {
                let n = self.rng.gen_range(2..=8);
                let mut ids: Vec<usize> = (0..KEYS).collect();
                ids.shuffle(&mut self.rng);
                // One marker value shared by every put of the batch.
                let marker = self.value("b");
                let ops = ids[..n]
                    .iter()
                    .map(|&i| {
                        let v = (!self.rng.gen_bool(0.2)).then(|| marker.clone());
                        (in_ks(self.current, &key(i)), v)
                    })
                    .collect();
                Op::Batch(ops)
            }
        }
    }
}

impl Gen {
    /// A transaction of distinct keys, in the keyspace in use or (keyspace
    /// variant) others too; the keyspace in use after it is its last one's.
    fn txn(&mut self) -> Op {
        const MODES: [&str; 4] = [
            "optimistic snapshot",
            "optimistic serializable",
            "pessimistic snapshot",
            "pessimistic serializable",
        ];
        let mode = MODES[self.rng.gen_range(0..MODES.len())];
        let n = self.rng.gen_range(1..=6);
        let mut ids: Vec<usize> = (0..KEYS).collect();
        ids.shuffle(&mut self.rng);
        let marker = self.value("t");
        let mut ops = Vec::with_capacity(n);
        for &i in &ids[..n] {
            if self.keyspaces && self.rng.gen_bool(0.3) {
                self.current = self.pick_keyspace();
            }
            let v = (!self.rng.gen_bool(0.2)).then(|| marker.clone());
            ops.push((in_ks(self.current, &key(i)), v));
        }
        Op::Txn(mode, ops)
    }
}

/// Checks a `get` answer against the model.
fn check_get(sh: &mut Shell, model: &State, k: &[u8]) {
    let got = sh.call(&format!("get {}", enc(split_ks(k).1)));
    let want = model.get(k).map_or("(nil)".to_string(), |v| enc(v));
    let got_bytes = (got != "(nil)").then(|| dec(&got));
    assert_eq!(
        got_bytes.as_deref(),
        model.get(k).map(Vec::as_slice),
        "live get {} answered {got}, model {want}",
        enc(k)
    );
}

/// Checks a `scan` answer against the model.
fn check_scan(sh: &mut Shell, model: &State, lo: &[u8], hi: &[u8]) {
    let ks = split_ks(lo).0;
    sh.send(&format!(
        "scan {} {}",
        enc(split_ks(lo).1),
        enc(split_ks(hi).1)
    ));
    let mut got = State::new();
    loop {
        let line = sh.answer();
        if line == "END" {
            break;
        }
        let (k, v) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("bad scan line {line:?}"));
        got.insert(in_ks(ks, &dec(k)), dec(v));
    }
    let want: State = model
        .range(lo.to_vec()..hi.to_vec())
        .filter(|(k, _)| split_ks(k).0 == ks)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, want, "live scan [{}, {})", enc(lo), enc(hi));
}

/// One cycle: random acknowledged operations, then a kill at a random moment.
/// Returns the writes in flight at kill time.
fn run_cycle(dir: &Path, gen: &mut Gen, model: &mut State, sync: bool) -> Vec<Op> {
    let mut sh = Shell::spawn(dir, sync);
    gen.current = "default";
    let ops = if gen.rng.gen_bool(0.1) {
        // Kill while the shell may still be opening (recovering) the database.
        0
    } else if sync {
        gen.rng.gen_range(30..150)
    } else {
        gen.rng.gen_range(200..800)
    };
    for i in 0..ops {
        if gen.keyspaces && i == 0 {
            // The named keyspaces, created once (acknowledged).
            for name in NAMED {
                if !gen.existing.contains(&name) {
                    assert_eq!(sh.call(&format!("create-keyspace {name}")), "OK");
                    gen.existing.push(name);
                }
            }
        }
        if gen.keyspaces && gen.rng.gen_bool(0.01) {
            // Drop a named keyspace and create it again: empty.
            let name = NAMED[gen.rng.gen_range(0..NAMED.len())];
            if gen.current == name {
                assert_eq!(sh.call("use default"), "OK");
                gen.current = "default";
            }
            assert_eq!(sh.call(&format!("drop-keyspace {name}")), "OK");
            model.retain(|k, _| split_ks(k).0 != name);
            assert_eq!(sh.call(&format!("create-keyspace {name}")), "OK");
            continue;
        }
        match gen.rng.gen_range(0..100) {
            0..=83 => {
                let w = gen.write();
                for line in w.lines() {
                    let answer = sh.call(&line);
                    assert_eq!(answer, "OK", "{line} of write {}", w.line());
                }
                w.apply(model);
            }
            84..=89 => {
                let k = gen.random_key();
                check_get(&mut sh, model, &k);
            }
            90..=92 => {
                let (a, b) = (gen.random_key(), gen.random_key());
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                check_scan(&mut sh, model, &lo, &hi);
            }
            93..=98 => assert_eq!(sh.call("flush"), "OK"),
            _ => assert_eq!(sh.call("compact"), "OK"),
        }
    }
    // The kill: sometimes with nothing in flight, sometimes right after
    // sending commands whose answers are never read.
    let mut in_flight = Vec::new();
    let mut send_writes = |sh: &mut Shell, gen: &mut Gen, n: usize| {
        for _ in 0..n {
            let w = gen.write();
            for line in w.lines() {
                sh.send(&line);
            }
            in_flight.push(w);
        }
    };
    match gen.rng.gen_range(0..6) {
        0 => {}
        1 => send_writes(&mut sh, gen, 1),
        2 => {
            let n = gen.rng.gen_range(2..10);
            send_writes(&mut sh, gen, n);
        }
        3 => {
            sh.send(if gen.rng.gen_bool(0.7) {
                "flush"
            } else {
                "compact"
            });
            let n = gen.rng.gen_range(0..4);
            send_writes(&mut sh, gen, n);
        }
        4 => {
            send_writes(&mut sh, gen, 1);
            sh.send("flush");
            send_writes(&mut sh, gen, 1);
        }
        _ => {
            let n = gen.rng.gen_range(1..6);
            send_writes(&mut sh, gen, n);
        }
    }
    if !in_flight.is_empty() && gen.rng.gen_bool(0.5) {
        // Give the shell a moment to apply part of the in-flight writes.
        std::thread::sleep(Duration::from_micros(gen.rng.gen_range(0..3_000)));
    }
    sh.kill();
    in_flight
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={s:?} is not a number")),
        Err(_) => default,
    }
}

#[test]
fn sigkill_loses_no_acknowledged_write() {
    crash_cycles(false, 30);
}

/// The same with writes into three keyspaces, a drop now and then.
#[test]
fn sigkill_loses_no_acknowledged_write_in_any_keyspace() {
    crash_cycles(true, 20);
}

/// `cycles` (or `SIEVEDB_CRASH_CYCLES`) kill/reopen cycles, in keyspaces if
/// `keyspaces`.
fn crash_cycles(keyspaces: bool, cycles: u64) {
    let cycles = env_u64("SIEVEDB_CRASH_CYCLES", cycles) as usize;
    let seed = env_u64("SIEVEDB_CRASH_SEED", 0x51e7_eddb);
    eprintln!("crash test: {cycles} cycles, SIEVEDB_CRASH_SEED={seed}, keyspaces {keyspaces}");
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("db");
    let mut gen = Gen {
        rng: SmallRng::seed_from_u64(seed),
        cycle: 0,
        op: 0,
        keyspaces,
        current: "default",
        existing: Vec::new(),
    };
    let mut model = State::new();
    let start = Instant::now();
    let mut partial_prefixes = 0;
    for cycle in 0..cycles {
        gen.cycle = cycle;
        gen.op = 0;
        let sync = cycle % 4 == 3;
        let in_flight = run_cycle(&dir, &mut gen, &mut model, sync);
        let recovered =
            read_back(&dir).unwrap_or_else(|e| panic!("cycle {cycle} (seed {seed}): {e}"));
        match verify(&recovered, &model, &in_flight) {
            Ok(state) => {
                if state != model {
                    partial_prefixes += 1;
                }
                model = state;
            }
            Err(e) => panic!("cycle {cycle} (seed {seed}, sync {sync}): {e}"),
        }
    }
    eprintln!(
        "crash test: {cycles} cycles in {:?}, {} keys at the end ({} in named keyspaces), {partial_prefixes} cycle(s) recovered in-flight writes",
        start.elapsed(),
        model.len(),
        model.keys().filter(|k| split_ks(k).0 != "default").count()
    );
    assert!(!model.is_empty());
    assert!(!keyspaces || model.keys().any(|k| split_ks(k).0 != "default"));
}

/// The checker itself must catch a lost acknowledged write: acknowledged
/// writes are wiped from the WAL behind the engine's back after the kill.
#[test]
fn crash_check_detects_a_lost_acknowledged_write() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("db");
    let mut sh = Shell::spawn(&dir, false);
    let mut model = State::new();
    for i in 0..20 {
        let w = Op::Put(key(i), format!("v{i}").into_bytes());
        assert_eq!(sh.call(&w.line()), "OK");
        w.apply(&mut model);
    }
    sh.kill();
    // Sanity: untouched, the crash is survived.
    assert_eq!(read_back(&dir).as_ref(), Ok(&model));

    // Now sabotage: write more acknowledged data, kill, and empty every WAL.
    let mut sh = Shell::spawn(&dir, false);
    let w = Op::Put(key(1), b"newer".to_vec());
    assert_eq!(sh.call(&w.line()), "OK");
    w.apply(&mut model);
    sh.kill();
    for entry in std::fs::read_dir(&dir).expect("list db dir") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "log") {
            std::fs::File::create(&path).expect("truncate WAL");
        }
    }
    let recovered = read_back(&dir).expect("reopen after sabotage");
    let err =
        verify(&recovered, &model, &[]).expect_err("a lost acknowledged write must be detected");
    assert!(err.contains("NEVER WRITTEN / LOST"), "{err}");
}

#[test]
fn checker_accepts_prefixes_and_rejects_torn_batches() {
    let acked: State = [(b"a".to_vec(), b"1".to_vec())].into_iter().collect();
    let batch = Op::Batch(vec![
        (b"a".to_vec(), Some(b"B".to_vec())),
        (b"b".to_vec(), Some(b"B".to_vec())),
        (b"c".to_vec(), None),
    ]);
    let put = Op::Put(b"d".to_vec(), b"2".to_vec());
    let in_flight = [batch, put];
    let st = |pairs: &[(&str, &str)]| -> State {
        pairs
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    };
    // Nothing, the batch, or the batch and the put.
    assert!(verify(&st(&[("a", "1")]), &acked, &in_flight).is_ok());
    assert!(verify(&st(&[("a", "B"), ("b", "B")]), &acked, &in_flight).is_ok());
    assert!(verify(
        &st(&[("a", "B"), ("b", "B"), ("d", "2")]),
        &acked,
        &in_flight
    )
    .is_ok());
    // A torn batch.
    assert!(verify(&st(&[("a", "B")]), &acked, &in_flight).is_err());
    assert!(verify(&st(&[("a", "1"), ("b", "B")]), &acked, &in_flight).is_err());
    // A later write without the earlier one.
    assert!(verify(&st(&[("a", "1"), ("d", "2")]), &acked, &in_flight).is_err());
    // A lost acknowledged write, and a value nobody wrote.
    assert!(verify(&st(&[]), &acked, &in_flight).is_err());
    assert!(verify(&st(&[("a", "9")]), &acked, &in_flight).is_err());
}

#[test]
fn a_transaction_is_sent_as_lines_and_checked_all_or_nothing() {
    let txn = Op::Txn(
        "pessimistic serializable",
        vec![
            (in_ks("default", b"a"), Some(b"T".to_vec())),
            (in_ks("ks1", b"b"), Some(b"T".to_vec())),
            (in_ks("ks1", b"c"), None),
        ],
    );
    assert_eq!(
        txn.lines(),
        [
            "begin pessimistic serializable",
            "use default",
            "put a T",
            "use ks1",
            "put b T",
            "del c",
            "commit"
        ]
    );
    let acked: State = [(in_ks("ks1", b"c"), b"1".to_vec())].into_iter().collect();
    let in_flight = [txn];
    let mut whole = State::new();
    whole.insert(in_ks("default", b"a"), b"T".to_vec());
    whole.insert(in_ks("ks1", b"b"), b"T".to_vec());
    assert!(verify(&acked, &acked, &in_flight).is_ok());
    assert!(verify(&whole, &acked, &in_flight).is_ok());
    // Half of it: the put into ks1 and the delete missing.
    let mut torn = acked.clone();
    torn.insert(in_ks("default", b"a"), b"T".to_vec());
    assert!(verify(&torn, &acked, &in_flight).is_err());
}
