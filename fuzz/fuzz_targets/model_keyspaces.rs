//! The keyspaces of the `model` target: the default keyspace (through its
//! handle) and two named ones, `a` and `b`, each with its model, written
//! alone and in batches across keyspaces, read in both directions and
//! through snapshots, opened, dropped and recreated, compacted, and
//! reopened lazily after `Op::Reopen`. Without a TTL, `a` has the
//! database's options (`Append`) and `b` the other compaction style and
//! `U64Add`; with
//! one, `a` has the database's TTL and `b` a shorter one (merges refused).

use super::*;
use sievedb::merge::U64Add;
use sievedb::{CompactionStyle, Error, Keyspace, KeyspaceOptions, Snapshot};

/// Seconds a value of `b` lives in a TTL run (`a` has the database's [`TTL`]).
const B_TTL: u64 = 3;

/// An operation on a keyspace: `t % 3` picks it (0: the default one, 1:
/// `a`, 2: `b`); a named one is opened (created) by the first operation
/// that needs it.
#[derive(Arbitrary, Debug)]
pub enum KsOp {
    Put(u8, u8, Vec<u8>),
    Delete(u8, u8),
    /// Target, then `delete_range` bounds as [`Op::DeleteRange`].
    DeleteRange(u8, u8, u8, u8),
    Merge(u8, u8, Vec<u8>),
    Get(u8, u8),
    /// A scan from key `a` to key `b`, backward if the flag is set.
    Scan(u8, u8, u8, bool),
    Walk(u8, u8, u8, Vec<Step>),
    Prefix(u8, Vec<u8>),
    /// Reads every keyspace through snapshot `n` (modulo the live ones):
    /// bounded scans in the given direction and point reads.
    SnapshotRead(u8, u8, u8, bool),
    /// One batch across keyspaces, applied in order.
    Batch(Vec<(u8, BatchOp)>),
    /// Opens the keyspace (a second handle if it is open: its options
    /// cannot be given again).
    Open(u8),
    /// Drops `a` or `b` (or fails to drop a missing one).
    Drop(u8),
    /// `compact_range` of the keyspace from key `a` to key `b`.
    Compact(u8, u8, u8),
}

/// How a keyspace merges.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Merging {
    Append,
    U64Add,
    /// A TTL keyspace: merges refused.
    Refused,
}

struct Named {
    name: &'static str,
    exists: bool,
    handle: Option<Keyspace>,
    /// Drops so far: a snapshot from before a drop reads the keyspace
    /// recreated under the same name as empty.
    incarnation: u32,
    model: Stamped,
}

/// The named keyspaces of one run.
pub struct Spaces {
    ttl_run: bool,
    named: [Named; 2],
}

/// Each keyspace's model at a snapshot: the default one's, then the named
/// ones' with their incarnation.
pub type SnapModels = (Stamped, [(u32, Stamped); 2]);

/// A value as `U64Add` reads it: 8 bytes, cut or padded.
fn u64_bytes(v: &[u8]) -> Vec<u8> {
    let mut b = v[..v.len().min(8)].to_vec();
    b.resize(8, 0);
    b
}

/// What a read at `now` sees of `m` under a TTL of `ttl` seconds (if any).
fn visible_for(m: &Stamped, ttl: Option<u64>, now: u64) -> Model {
    m.iter()
        .filter(|(_, (_, t))| ttl.is_none_or(|s| t + s > now))
        .map(|(k, (v, _))| (k.clone(), v.clone()))
        .collect()
}

fn scan_bounds(a: u8, b: u8) -> Range {
    let (lo, hi) = bounds(a, b);
    (Bound::Included(lo), Bound::Excluded(hi))
}

impl Spaces {
    pub fn new(ttl_run: bool) -> Self {
        let named = |name| Named {
            name,
            exists: false,
            handle: None,
            incarnation: 0,
            model: Stamped::new(),
        };
        Spaces {
            ttl_run,
            named: [named("a"), named("b")],
        }
    }

    /// The options keyspace `j` (0: `a`, 1: `b`) is opened with.
    fn options(&self, j: usize) -> KeyspaceOptions {
        match (j, self.ttl_run) {
            (0, _) => KeyspaceOptions::default(),
            (_, true) => KeyspaceOptions::default().ttl(Duration::from_secs(B_TTL)),
            (_, false) => KeyspaceOptions::default()
                .compaction_style(CompactionStyle::Tiering)
                .target_file_size(8192)
                .block_size(512)
                .merge_operator(Arc::new(U64Add)),
        }
    }

    /// The TTL of keyspace `i` (0: default, 1: `a`, 2: `b`), if any.
    fn ttl(&self, i: usize) -> Option<u64> {
        match (i, self.ttl_run) {
            (_, false) => None,
            (2, true) => Some(B_TTL),
            _ => Some(TTL),
        }
    }

    fn merging(&self, i: usize) -> Merging {
        match (i, self.ttl_run) {
            (_, true) => Merging::Refused,
            (2, false) => Merging::U64Add,
            _ => Merging::Append,
        }
    }

    /// A value as stored in keyspace `i`.
    fn value(&self, i: usize, v: &[u8]) -> Vec<u8> {
        match self.merging(i) {
            Merging::U64Add => u64_bytes(v),
            _ => v.to_vec(),
        }
    }

    /// The handle of keyspace `i`, opening (creating) a named one.
    fn handle(&mut self, db: &Db, i: usize) -> Keyspace {
        if i == 0 {
            return db.default_keyspace();
        }
        let opts = self.options(i - 1);
        let n = &mut self.named[i - 1];
        if let Some(h) = &n.handle {
            return h.clone();
        }
        let h = db.keyspace_with(n.name, opts).unwrap();
        if !n.exists {
            assert!(n.model.is_empty());
            n.exists = true;
        }
        n.handle = Some(h.clone());
        h
    }

    fn model<'m>(&'m mut self, default: &'m mut Stamped, i: usize) -> &'m mut Stamped {
        match i {
            0 => default,
            _ => &mut self.named[i - 1].model,
        }
    }

    /// What a read at `now` sees of keyspace `i`.
    fn visible(&self, default: &Stamped, i: usize, now: u64) -> Model {
        let m = match i {
            0 => default,
            _ => &self.named[i - 1].model,
        };
        visible_for(m, self.ttl(i), now)
    }

    /// The models a snapshot taken now reads.
    pub fn copies(&self, default: &Stamped) -> SnapModels {
        let c = |n: &Named| (n.incarnation, n.model.clone());
        (default.clone(), [c(&self.named[0]), c(&self.named[1])])
    }

    /// Drops the handles (before the database is closed).
    pub fn release(&mut self) {
        for n in &mut self.named {
            n.handle = None;
        }
    }

    /// The names `list_keyspaces` returns.
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .named
            .iter()
            .filter(|n| n.exists)
            .map(|n| n.name.to_string())
            .chain(["default".to_string()])
            .collect();
        v.sort();
        v
    }

    /// The named keyspaces of `db` (this one, reopened, or a checkpoint)
    /// equal their models, forward and backward.
    pub fn check(&mut self, db: &Db, same_db: bool, now: u64) {
        assert_eq!(db.list_keyspaces(), self.names());
        for j in 0..2 {
            if !self.named[j].exists {
                continue;
            }
            let h = if same_db {
                self.handle(db, j + 1)
            } else {
                db.keyspace_with(self.named[j].name, self.options(j))
                    .unwrap()
            };
            let want = visible_for(&self.named[j].model, self.ttl(j + 1), now);
            let got: Model = h.iter().unwrap().map(|r| r.unwrap()).collect();
            assert_eq!(got, want);
            let mut back: Vec<_> = h.iter().unwrap().rev().map(|r| r.unwrap()).collect();
            back.reverse();
            assert_eq!(back, want.into_iter().collect::<Vec<_>>());
        }
    }

    /// Runs `op`; `default` is the default keyspace's model, `snapshots` the
    /// live snapshots with every keyspace's model.
    pub fn run(
        &mut self,
        op: &KsOp,
        db: &Db,
        default: &mut Stamped,
        snapshots: &[(Snapshot, SnapModels)],
        now: u64,
    ) {
        let pick = |t: &u8| usize::from(t % 3);
        match op {
            KsOp::Put(t, k, v) => {
                let i = pick(t);
                let v = self.value(i, v);
                self.handle(db, i).put(key(*k), &v).unwrap();
                self.model(default, i).insert(key(*k), (v, now));
            }
            KsOp::Delete(t, k) => {
                let i = pick(t);
                self.handle(db, i).delete(key(*k)).unwrap();
                self.model(default, i).remove(&key(*k));
            }
            KsOp::DeleteRange(t, a, b, shape) => {
                let i = pick(t);
                let r = range(*a, *b, *shape);
                self.handle(db, i).delete_range(r.clone()).unwrap();
                self.model(default, i).retain(|k, _| !in_range(k, &r));
            }
            KsOp::Merge(t, k, v) => {
                let i = pick(t);
                let h = self.handle(db, i);
                match self.merging(i) {
                    Merging::Refused => {
                        let r = h.merge(key(*k), v);
                        assert!(matches!(r, Err(Error::InvalidArgument(_))));
                    }
                    m => {
                        let v = if m == Merging::U64Add {
                            u64_bytes(v)
                        } else {
                            v.clone()
                        };
                        h.merge(key(*k), &v).unwrap();
                        merge_as(m, self.model(default, i), key(*k), &v, now);
                    }
                }
            }
            KsOp::Get(t, k) => {
                let i = pick(t);
                let h = self.handle(db, i);
                let want = self.visible(default, i, now);
                assert_eq!(h.get(key(*k)).unwrap(), want.get(&key(*k)).cloned());
                let keys = [key(*k), key(k.wrapping_add(1)), key(k.wrapping_mul(7))];
                let got = h.multi_get(&keys).unwrap();
                for (k, g) in keys.iter().zip(got) {
                    assert_eq!(g, want.get(k).cloned());
                }
            }
            KsOp::Scan(t, a, b, reverse) => {
                let i = pick(t);
                let h = self.handle(db, i);
                let m = self.visible(default, i, now);
                let (lo, hi) = bounds(*a, *b);
                let mut want = items(&m, &lo, &hi);
                if *reverse {
                    want.reverse();
                }
                assert_eq!(collect(h.range(lo..hi).unwrap(), *reverse), want);
            }
            KsOp::Walk(t, a, b, steps) => {
                let i = pick(t);
                let h = self.handle(db, i);
                let m = self.visible(default, i, now);
                let (lo, hi) = bounds(*a, *b);
                walk(
                    h.range(lo.clone()..hi.clone()).unwrap(),
                    &items(&m, &lo, &hi),
                    steps,
                );
            }
            KsOp::Prefix(t, p) => {
                let i = pick(t);
                let h = self.handle(db, i);
                let m = self.visible(default, i, now);
                let p = &p[..p.len().min(5)];
                let want: Vec<_> = m.into_iter().filter(|(k, _)| k.starts_with(p)).collect();
                assert_eq!(collect(h.prefix(p).unwrap(), false), want);
                let mut back = collect(h.prefix(p).unwrap(), true);
                back.reverse();
                assert_eq!(back, want);
            }
            KsOp::SnapshotRead(n, a, b, reverse) => {
                if snapshots.is_empty() {
                    return;
                }
                let (snap, (sdefault, snamed)) = &snapshots[usize::from(*n) % snapshots.len()];
                let r = scan_bounds(*a, *b);
                let (Bound::Included(lo), Bound::Excluded(hi)) = &r else {
                    unreachable!()
                };
                let ro = ReadOptions::default()
                    .snapshot(snap)
                    .lower_bound(lo)
                    .upper_bound(hi);
                for i in 0..3 {
                    if i > 0 && !self.named[i - 1].exists {
                        continue;
                    }
                    let h = self.handle(db, i);
                    // A snapshot read expires values as of now, like any read.
                    let m = match i {
                        0 => visible_for(sdefault, self.ttl(0), now),
                        _ => {
                            let (inc, m) = &snamed[i - 1];
                            if *inc == self.named[i - 1].incarnation {
                                visible_for(m, self.ttl(i), now)
                            } else {
                                Model::new()
                            }
                        }
                    };
                    let mut want = items(&m, lo, hi);
                    if *reverse {
                        want.reverse();
                    }
                    assert_eq!(collect(h.iter_opt(&ro).unwrap(), *reverse), want);
                    assert_eq!(h.get_opt(lo, &ro).unwrap(), m.get(lo).cloned());
                    let got = h.multi_get_opt([lo, hi], &ro).unwrap();
                    assert_eq!(got, [m.get(lo).cloned(), m.get(hi).cloned()]);
                }
            }
            KsOp::Batch(entries) => self.batch(entries, db, default, now),
            KsOp::Open(t) => {
                let i = pick(t);
                let name = if i == 0 {
                    "default"
                } else {
                    self.named[i - 1].name
                };
                let open = i == 0 || self.named[i - 1].handle.is_some();
                if open {
                    // Its options are set: only `keyspace` gives a handle.
                    let opts = if i == 0 {
                        KeyspaceOptions::default()
                    } else {
                        self.options(i - 1)
                    };
                    let r = db.keyspace_with(name, opts);
                    assert!(matches!(r, Err(Error::InvalidArgument(_))));
                    let h = db.keyspace(name).unwrap();
                    if i > 0 {
                        self.named[i - 1].handle = Some(h);
                    }
                } else {
                    self.handle(db, i);
                    assert!(db.list_keyspaces().iter().any(|n| n == name));
                }
            }
            KsOp::Drop(t) => {
                let j = usize::from(t % 2);
                let n = &mut self.named[j];
                if !n.exists {
                    let r = db.drop_keyspace(n.name);
                    assert!(matches!(r, Err(Error::InvalidArgument(_))));
                    return;
                }
                let old = n.handle.take();
                db.drop_keyspace(n.name).unwrap();
                n.exists = false;
                n.model.clear();
                n.incarnation += 1;
                assert!(!db.list_keyspaces().iter().any(|x| x == n.name));
                if let Some(h) = old {
                    assert!(matches!(h.put(b"x", b"y"), Err(Error::InvalidArgument(_))));
                    let mut b = WriteBatch::new();
                    b.put(b"\xffdrop-probe", b"y");
                    b.put_cf(&h, b"x", b"y");
                    assert!(matches!(db.write(b), Err(Error::InvalidArgument(_))));
                    assert_eq!(db.get(b"\xffdrop-probe").unwrap(), None);
                }
            }
            KsOp::Compact(t, a, b) => {
                let i = pick(t);
                let (lo, hi) = bounds(*a, *b);
                self.handle(db, i).compact_range(lo..hi).unwrap();
            }
        }
    }

    /// A batch across keyspaces; a merge into a TTL keyspace refuses it all.
    fn batch(&mut self, entries: &[(u8, BatchOp)], db: &Db, default: &mut Stamped, now: u64) {
        let mut b = WriteBatch::new();
        let mut staged: [Stamped; 3] = [
            default.clone(),
            self.named[0].model.clone(),
            self.named[1].model.clone(),
        ];
        let mut refused = false;
        for (t, op) in entries.iter().take(20) {
            let i = usize::from(t % 3);
            let h = self.handle(db, i);
            // The default keyspace through `WriteBatch`'s own methods on
            // odd targets, through its handle on even ones.
            let plain = i == 0 && t % 2 == 1;
            match op {
                BatchOp::Put(k, v) => {
                    let v = self.value(i, v);
                    if plain {
                        b.put(key(*k), &v);
                    } else {
                        b.put_cf(&h, key(*k), &v);
                    }
                    staged[i].insert(key(*k), (v, now));
                }
                BatchOp::Delete(k) => {
                    if plain {
                        b.delete(key(*k));
                    } else {
                        b.delete_cf(&h, key(*k));
                    }
                    staged[i].remove(&key(*k));
                }
                BatchOp::DeleteRange(x, y, shape) => {
                    let r = range(*x, *y, *shape);
                    if plain {
                        b.delete_range(r.clone());
                    } else {
                        b.delete_range_cf(&h, r.clone());
                    }
                    staged[i].retain(|k, _| !in_range(k, &r));
                }
                BatchOp::Merge(k, v) => {
                    let m = self.merging(i);
                    let v = if m == Merging::U64Add {
                        u64_bytes(v)
                    } else {
                        v.clone()
                    };
                    if plain {
                        b.merge(key(*k), &v);
                    } else {
                        b.merge_cf(&h, key(*k), &v);
                    }
                    match m {
                        Merging::Refused => refused = true,
                        m => merge_as(m, &mut staged[i], key(*k), &v, now),
                    }
                }
            }
        }
        if refused {
            assert!(matches!(db.write(b), Err(Error::InvalidArgument(_))));
            return;
        }
        db.write(b).unwrap();
        let [d, a, bb] = staged;
        *default = d;
        self.named[0].model = a;
        self.named[1].model = bb;
    }
}

/// A merge into `m` as keyspace merging `how` does it.
fn merge_as(how: Merging, m: &mut Stamped, k: Vec<u8>, operand: &[u8], now: u64) {
    match how {
        Merging::Append => merge(m, k, operand),
        Merging::U64Add => {
            let add = u64::from_le_bytes(operand.try_into().unwrap());
            let e = m.entry(k).or_insert((vec![0; 8], now));
            let old = u64::from_le_bytes(e.0.as_slice().try_into().unwrap());
            e.0 = old.wrapping_add(add).to_le_bytes().to_vec();
        }
        Merging::Refused => unreachable!(),
    }
}
