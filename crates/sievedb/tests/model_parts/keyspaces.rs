//! Keyspaces in the model test: named keyspaces beside the default one,
//! each with its model: `plain` (an `Append` merge operator), `counters`
//! with `U64Add`, the other compaction style and its own filter bits, and,
//! in a database opened without a merge operator, `ttl` with a TTL on the
//! test's manual clock (a merge into it is refused) and a smaller write
//! buffer. (A keyspace cannot unset the database's merge operator, and a
//! TTL refuses one: with `Append` on the database, as the other
//! configurations have for the default keyspace, no TTL keyspace.) They are
//! created, opened, dropped and recreated at random; after a reopen each is
//! opened again with its options, at once or only when an operation first
//! needs it. The operations on them are in `ks_ops.rs`.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::Rng;
use sievedb::merge::U64Add;
use sievedb::{CompactionStyle, Db, Error, Keyspace, KeyspaceOptions};

use crate::common::{assert_same_items, collect_all, show, ManualClock, Model};
use crate::model_parts::checks::{check_range_rev, in_bounds};
use crate::model_parts::gen::{gen_operand, gen_value, MERGE_SEP};

/// Seconds a value of the `ttl` keyspace lives.
pub const TTL: u64 = 60;

/// A keyspace's model: each key's newest value and its write time (read
/// through [`Keyspaces::visible`], which applies the TTL of `ttl`).
pub type Stamped = BTreeMap<Vec<u8>, (Vec<u8>, u64)>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The database's options: `Append` merges.
    Plain,
    /// `U64Add` merges; every put writes a `u64` too.
    Counter,
    /// A TTL of [`TTL`] seconds; merges refused.
    Ttl,
}

pub struct Space {
    pub name: &'static str,
    pub kind: Kind,
    /// Created and not dropped since.
    pub exists: bool,
    /// The handle, once opened in this incarnation of the database.
    pub handle: Option<Keyspace>,
    /// Drops so far: a snapshot taken before a drop reads the keyspace
    /// recreated under the same name as empty.
    pub incarnation: u32,
    pub model: Stamped,
}

/// Counters over a whole run, for the coverage checks.
#[derive(Default)]
pub struct KsTotals {
    pub creates: u64,
    pub drops: u64,
    pub batches: u64,
    pub refused_batches: u64,
    pub lazy_opens: u64,
    pub deepest_level_with_files: usize,
}

impl KsTotals {
    pub fn add(&mut self, t: &KsTotals) {
        self.creates += t.creates;
        self.drops += t.drops;
        self.batches += t.batches;
        self.refused_batches += t.refused_batches;
        self.lazy_opens += t.lazy_opens;
        self.deepest_level_with_files = self
            .deepest_level_with_files
            .max(t.deepest_level_with_files);
    }
}

pub struct Keyspaces {
    pub clock: Arc<ManualClock>,
    /// The database's compaction style (`counters` runs the other one).
    style: CompactionStyle,
    pub spaces: Vec<Space>,
    /// The default keyspace has the `Append` merge operator (no TTL
    /// keyspace then).
    pub default_merges: bool,
    /// Each live snapshot's copy of the keyspace models, by the operation
    /// index it was taken at: (incarnation, model) per keyspace.
    snaps: HashMap<usize, Vec<(u32, Stamped)>>,
    pub totals: KsTotals,
}

/// What a read at `now` sees of `m` in a keyspace of `kind`.
pub fn visible_of(kind: Kind, m: &Stamped, now: u64) -> Model {
    m.iter()
        .filter(|(_, (_, t))| kind != Kind::Ttl || t + TTL > now)
        .map(|(k, (v, _))| (k.clone(), v.clone()))
        .collect()
}

/// A `u64` as `U64Add` stores it.
pub fn le(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

/// What `merge` of `operand` into `k` does to the model of a `kind` keyspace.
pub fn merge_into(kind: Kind, m: &mut Stamped, k: Vec<u8>, operand: &[u8], now: u64) {
    match kind {
        Kind::Plain => match m.get_mut(&k) {
            Some((v, _)) => {
                v.extend_from_slice(MERGE_SEP);
                v.extend_from_slice(operand);
            }
            None => {
                m.insert(k, (operand.to_vec(), now));
            }
        },
        Kind::Counter => {
            let add = u64::from_le_bytes(operand.try_into().expect("a u64 operand"));
            let e = m.entry(k).or_insert((le(0), now));
            let old = u64::from_le_bytes(e.0.as_slice().try_into().expect("a u64 value"));
            e.0 = le(old.wrapping_add(add));
        }
        Kind::Ttl => unreachable!("a merge into a TTL keyspace is refused"),
    }
}

pub fn delete_range_in(m: &mut Stamped, r: &(Bound<Vec<u8>>, Bound<Vec<u8>>)) {
    m.retain(|k, _| !in_bounds(k, r));
}

impl Keyspaces {
    /// The keyspaces of a database of compaction style `style`, `ttl`
    /// among them if `with_ttl`.
    pub fn new(clock: Arc<ManualClock>, style: CompactionStyle, with_ttl: bool) -> Self {
        let space = |name, kind| Space {
            name,
            kind,
            exists: false,
            handle: None,
            incarnation: 0,
            model: Stamped::new(),
        };
        let mut spaces = vec![
            space("plain", Kind::Plain),
            space("counters", Kind::Counter),
        ];
        if with_ttl {
            spaces.push(space("ttl", Kind::Ttl));
        }
        Keyspaces {
            clock,
            style,
            default_merges: !with_ttl,
            spaces,
            snaps: HashMap::new(),
            totals: KsTotals::default(),
        }
    }

    /// The options keyspace `kind` is created and opened with.
    pub fn options(&self, kind: Kind) -> KeyspaceOptions {
        match kind {
            Kind::Plain => KeyspaceOptions::default()
                .merge_operator(Arc::new(sievedb::merge::Append::new(MERGE_SEP))),
            Kind::Counter => KeyspaceOptions::default()
                .merge_operator(Arc::new(U64Add))
                .compaction_style(self.other_style())
                .bits_per_key(5.0),
            Kind::Ttl => KeyspaceOptions::default()
                .ttl(Duration::from_secs(TTL))
                .write_buffer_size(8 << 10),
        }
    }

    fn other_style(&self) -> CompactionStyle {
        match self.style {
            CompactionStyle::Leveling => CompactionStyle::Tiering,
            _ => CompactionStyle::Leveling,
        }
    }

    pub fn now(&self) -> u64 {
        self.clock.now()
    }

    /// What a read now sees of keyspace `i`.
    pub fn visible(&self, i: usize) -> Model {
        let s = &self.spaces[i];
        visible_of(s.kind, &s.model, self.now())
    }

    /// A value for a put into keyspace `i` (a `u64` for `counters`).
    pub fn value(&self, i: usize, rng: &mut SmallRng, seed: u64, op: usize) -> Vec<u8> {
        match self.spaces[i].kind {
            Kind::Counter => le(rng.gen_range(0..1_000_000)),
            _ => gen_value(rng, seed, op),
        }
    }

    /// A merge operand for keyspace `i`.
    pub fn operand(&self, i: usize, rng: &mut SmallRng, op: usize) -> Vec<u8> {
        match self.spaces[i].kind {
            Kind::Counter => le(rng.gen_range(1..1000)),
            _ => gen_operand(rng, op),
        }
    }

    /// The handle of keyspace `i`, opened (created if it does not exist)
    /// with its options.
    pub fn open(&mut self, d: &Db, i: usize, ctx: &str) -> Keyspace {
        if let Some(h) = &self.spaces[i].handle {
            return h.clone();
        }
        let opts = self.options(self.spaces[i].kind);
        let s = &mut self.spaces[i];
        let h = d
            .keyspace_with(s.name, opts)
            .unwrap_or_else(|e| panic!("{ctx} keyspace_with {}: {e}", s.name));
        if !s.exists {
            assert!(s.model.is_empty(), "{ctx} the model of a new keyspace");
            s.exists = true;
            self.totals.creates += 1;
        }
        s.handle = Some(h.clone());
        h
    }

    /// A random existing keyspace, opened; `None` if there is none.
    pub fn pick(&mut self, rng: &mut SmallRng, d: &Db, ctx: &str) -> Option<usize> {
        let live: Vec<usize> = (0..self.spaces.len())
            .filter(|&i| self.spaces[i].exists)
            .collect();
        if live.is_empty() {
            return None;
        }
        let i = live[rng.gen_range(0..live.len())];
        self.open(d, i, ctx);
        Some(i)
    }

    pub fn handle(&self, i: usize) -> &Keyspace {
        self.spaces[i].handle.as_ref().expect("keyspace opened")
    }

    /// Records the keyspace models of the snapshot taken at operation `at`;
    /// forgets those of the snapshots no longer in `live`.
    pub fn snapshot_taken(&mut self, at: usize, live: &[usize]) {
        self.snaps.retain(|k, _| live.contains(k));
        let copy = self
            .spaces
            .iter()
            .map(|s| (s.incarnation, s.model.clone()))
            .collect();
        self.snaps.insert(at, copy);
    }

    /// What a read now through the snapshot taken at `at` sees of keyspace
    /// `i` (nothing if it was dropped since).
    pub fn snapshot_model(&self, at: usize, i: usize) -> Model {
        let (incarnation, m) = &self.snaps[&at][i];
        if *incarnation != self.spaces[i].incarnation {
            return Model::new();
        }
        visible_of(self.spaces[i].kind, m, self.now())
    }

    /// Drops every handle (they keep the database open) and the snapshot
    /// copies (snapshots do not outlive a reopen).
    pub fn release(&mut self) {
        for s in &mut self.spaces {
            s.handle = None;
        }
        self.snaps.clear();
    }

    /// The keyspace names `list_keyspaces` should return.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .spaces
            .iter()
            .filter(|s| s.exists)
            .map(|s| s.name.to_string())
            .chain(["default".to_string()])
            .collect();
        names.sort();
        names
    }

    /// After a reopen: the keyspaces listed are the model's; a keyspace is
    /// refused with the wrong TTL setting; each is opened and checked now
    /// (`eager`, or at random) or left for the first operation that needs it.
    /// Returns what it did, for the trace.
    pub fn after_reopen(&mut self, rng: &mut SmallRng, d: &Db, eager: bool, ctx: &str) -> String {
        let mut done = Vec::new();
        assert_eq!(d.list_keyspaces(), self.names(), "{ctx} list_keyspaces");
        for i in 0..self.spaces.len() {
            let s = &self.spaces[i];
            if !s.exists {
                continue;
            }
            let wrong = match s.kind {
                Kind::Ttl => d.keyspace(s.name),
                _ => d.keyspace_with(s.name, self.options(s.kind).ttl(Duration::from_secs(TTL))),
            };
            assert!(
                matches!(wrong, Err(Error::InvalidArgument(_))),
                "{ctx} keyspace {} opened with the wrong TTL setting: {:?}",
                s.name,
                wrong.map(|_| ())
            );
            if eager || rng.gen_bool(0.5) {
                done.push(format!("open {}", self.spaces[i].name));
                self.open(d, i, ctx);
                self.check_full(i, &format!("{ctx} after reopen"));
            } else {
                done.push(format!("leave {} unopened", self.spaces[i].name));
                self.totals.lazy_opens += 1;
            }
        }
        done.join(", ")
    }

    /// Every item of keyspace `i`, read forward, backward and by `get`.
    pub fn check_full(&self, i: usize, ctx: &str) {
        let h = self.handle(i);
        let ctx = format!("{ctx} keyspace {}", self.spaces[i].name);
        let m = self.visible(i);
        check_ks_equals(h, &m, &ctx);
    }

    /// Opens and checks every keyspace that exists.
    pub fn check_all(&mut self, d: &Db, ctx: &str) {
        for i in 0..self.spaces.len() {
            if self.spaces[i].exists {
                self.open(d, i, ctx);
                self.check_full(i, ctx);
            }
        }
    }

    /// Checks the keyspaces of another database holding the same data (a
    /// checkpoint): listed, opened with their options, equal to the models.
    pub fn check_copy(&self, c: &Db, ctx: &str) {
        assert_eq!(c.list_keyspaces(), self.names(), "{ctx} list_keyspaces");
        for (i, s) in self.spaces.iter().enumerate() {
            if s.exists {
                let h = c
                    .keyspace_with(s.name, self.options(s.kind))
                    .unwrap_or_else(|e| panic!("{ctx} keyspace_with {}: {e}", s.name));
                check_ks_equals(&h, &self.visible(i), &format!("{ctx} keyspace {}", s.name));
            }
        }
    }

    /// Notes the deepest level holding files of an open named keyspace.
    pub fn note_levels(&mut self) {
        for s in &self.spaces {
            if let Some(h) = &s.handle {
                for l in &h.stats().levels {
                    if l.files > 0 {
                        let deepest = &mut self.totals.deepest_level_with_files;
                        *deepest = (*deepest).max(l.level);
                    }
                }
            }
        }
    }
}

/// The whole content of keyspace `h` equals `m`: forward, backward, by `get`.
pub fn check_ks_equals(h: &Keyspace, m: &Model, ctx: &str) {
    let got = collect_all(h.iter(), ctx);
    assert_same_items(&got, m.iter(), &format!("{ctx} full iteration"));
    check_range_rev(h.iter(), m, &(Bound::Unbounded, Bound::Unbounded), ctx);
    for (k, v) in m {
        let g = h
            .get(k)
            .unwrap_or_else(|e| panic!("{ctx}: get {} failed: {e}", show(k)));
        assert_eq!(g.as_deref(), Some(v.as_slice()), "{ctx}: get {}", show(k));
    }
}
