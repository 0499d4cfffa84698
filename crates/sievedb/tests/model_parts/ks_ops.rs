//! The model test's operations on named keyspaces (`keyspaces.rs`): writes
//! into one keyspace, batches across keyspaces (the default one too),
//! reads in both directions, snapshot reads across keyspaces, creation,
//! drop, per-keyspace compaction and the TTL clock.

use std::ops::Bound;

use rand::rngs::SmallRng;
use rand::Rng;
use sievedb::{Db, Error, ReadOptions, Snapshot, WriteBatch};

use crate::common::{collect_all, show, Model};
use crate::model_parts::checks::{
    check_cursor_walk, check_double_ended, check_prefix, check_range, check_range_rev, show_bound,
};
use crate::model_parts::gen::{
    gen_delete_range, gen_key, gen_operand, gen_prefix, gen_range, gen_value, model_merge,
};
use crate::model_parts::keyspaces::{
    check_ks_equals, delete_range_in, merge_into, Keyspaces, Kind, Stamped,
};

/// What every operation gets: the database, where the run stands and the
/// trace of operations.
pub struct Step<'a> {
    pub d: &'a Db,
    pub seed: u64,
    pub i: usize,
    pub ctx: &'a str,
    pub record: &'a dyn Fn(String),
}

/// A key of `m` (often) or a random one.
fn key_of(rng: &mut SmallRng, m: &Model, p: f64) -> Vec<u8> {
    if !m.is_empty() && rng.gen_bool(p) {
        let n = rng.gen_range(0..m.len());
        m.keys().nth(n).expect("nth key").clone()
    } else {
        gen_key(rng)
    }
}

fn show_range(r: &(Bound<Vec<u8>>, Bound<Vec<u8>>)) -> String {
    format!("({}, {})", show_bound(&r.0), show_bound(&r.1))
}

impl Keyspaces {
    /// One random operation on the named keyspaces; `default` is the model
    /// of the default keyspace (cross-keyspace batches write it too),
    /// `snapshots` the live snapshots of the test with their op index.
    pub fn step(
        &mut self,
        rng: &mut SmallRng,
        s: &Step,
        default: &mut Model,
        snapshots: &[(Snapshot, Model, usize)],
    ) {
        let (d, i, ctx, record) = (s.d, s.i, s.ctx, s.record);
        let roll = rng.gen_range(0..300);
        match roll {
            0..=14 => return self.create_or_open(rng, s),
            15..=21 => return self.drop_one(rng, s, default),
            22..=33 => {
                let secs = rng.gen_range(0..30);
                record(format!("{i}: clock +{secs}s"));
                self.clock.advance(secs);
                return;
            }
            162..=191 => return self.batch(rng, s, default),
            247..=271 => return self.snapshot_reads(rng, s, snapshots),
            _ => {}
        }
        // The rest works on one keyspace: an existing one, or a new one.
        let k = match self.pick(rng, d, ctx) {
            Some(k) => k,
            None => {
                let k = rng.gen_range(0..self.spaces.len());
                record(format!("{i}: create {}", self.spaces[k].name));
                self.open(d, k, ctx);
                k
            }
        };
        let h = self.handle(k).clone();
        let (name, kind, now) = (self.spaces[k].name, self.spaces[k].kind, self.now());
        let ctx = &format!("{ctx} keyspace {name}");
        let m = self.visible(k);
        match roll {
            34..=96 => {
                let key = gen_key(rng);
                let v = self.value(k, rng, s.seed, i);
                record(format!("{i}: {name}: put {} = {}", show(&key), show(&v)));
                h.put(&key, &v).unwrap_or_else(|e| panic!("{ctx} put: {e}"));
                self.spaces[k].model.insert(key, (v, now));
            }
            97..=116 => {
                let key = key_of(rng, &m, 0.6);
                record(format!("{i}: {name}: delete {}", show(&key)));
                h.delete(&key)
                    .unwrap_or_else(|e| panic!("{ctx} delete: {e}"));
                self.spaces[k].model.remove(&key);
            }
            117..=131 => {
                let r = gen_delete_range(rng);
                record(format!("{i}: {name}: delete_range{}", show_range(&r)));
                h.delete_range(r.clone())
                    .unwrap_or_else(|e| panic!("{ctx} delete_range: {e}"));
                delete_range_in(&mut self.spaces[k].model, &r);
            }
            132..=161 => {
                let key = key_of(rng, &m, 0.5);
                let o = self.operand(k, rng, i);
                record(format!("{i}: {name}: merge {} {}", show(&key), show(&o)));
                if kind == Kind::Ttl {
                    let r = h.merge(&key, &o);
                    assert!(
                        matches!(r, Err(Error::InvalidArgument(_))),
                        "{ctx} a merge into a TTL keyspace: {r:?}"
                    );
                    let got = h.get(&key).unwrap_or_else(|e| panic!("{ctx} get: {e}"));
                    assert_eq!(got.as_ref(), m.get(&key), "{ctx} after a refused merge");
                } else {
                    h.merge(&key, &o)
                        .unwrap_or_else(|e| panic!("{ctx} merge: {e}"));
                    merge_into(kind, &mut self.spaces[k].model, key, &o, now);
                }
            }
            192..=216 => {
                if rng.gen_bool(0.5) {
                    let key = key_of(rng, &m, 0.5);
                    record(format!("{i}: {name}: get {}", show(&key)));
                    let got = h.get(&key).unwrap_or_else(|e| panic!("{ctx} get: {e}"));
                    assert_eq!(got.as_ref(), m.get(&key), "{ctx} get {}", show(&key));
                } else {
                    let keys: Vec<Vec<u8>> = (0..rng.gen_range(0..12))
                        .map(|_| key_of(rng, &m, 0.4))
                        .collect();
                    record(format!("{i}: {name}: multi_get of {} keys", keys.len()));
                    let got = h
                        .multi_get(&keys)
                        .unwrap_or_else(|e| panic!("{ctx} multi_get: {e}"));
                    assert_eq!(got.len(), keys.len(), "{ctx} multi_get result count");
                    for (key, g) in keys.iter().zip(&got) {
                        assert_eq!(g.as_ref(), m.get(key), "{ctx} multi_get {}", show(key));
                    }
                }
            }
            217..=246 => {
                let r = gen_range(rng);
                match rng.gen_range(0..5) {
                    0 => {
                        record(format!("{i}: {name}: range{}", show_range(&r)));
                        check_range(h.range(r.clone()), &m, &r, ctx);
                    }
                    1 => {
                        record(format!("{i}: {name}: rev range{}", show_range(&r)));
                        check_range_rev(h.range(r.clone()), &m, &r, ctx);
                    }
                    2 => {
                        record(format!("{i}: {name}: double-ended range{}", show_range(&r)));
                        let it = h
                            .range(r.clone())
                            .unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                        check_double_ended(rng, it, &m, &r, ctx);
                    }
                    3 => {
                        record(format!(
                            "{i}: {name}: cursor walk in range{}",
                            show_range(&r)
                        ));
                        let it = h
                            .range(r.clone())
                            .unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                        check_cursor_walk(rng, it, &m, &r, ctx, record);
                    }
                    _ => {
                        let p = gen_prefix(rng, &m);
                        record(format!("{i}: {name}: prefix {}", show(&p)));
                        check_prefix(|| h.prefix(&p), &m, &p, ctx);
                    }
                }
            }
            272..=281 => {
                record(format!("{i}: {name}: full check"));
                check_ks_equals(&h, &m, ctx);
            }
            282..=299 => {
                let r = if rng.gen_bool(0.3) {
                    (Bound::Unbounded, Bound::Unbounded)
                } else {
                    gen_range(rng)
                };
                record(format!("{i}: {name}: compact_range{}", show_range(&r)));
                h.compact_range(r)
                    .unwrap_or_else(|e| panic!("{ctx} compact_range: {e}"));
                self.note_levels();
            }
            _ => unreachable!("keyspace roll {roll}"),
        }
    }

    /// Opens a keyspace: creates a missing one, opens one left unopened
    /// since the reopen, or takes a second handle of an open one (whose
    /// options cannot be given again).
    fn create_or_open(&mut self, rng: &mut SmallRng, s: &Step) {
        let (d, i, ctx) = (s.d, s.i, s.ctx);
        let k = rng.gen_range(0..self.spaces.len());
        let sp = &self.spaces[k];
        let name = sp.name;
        match (&sp.handle, sp.exists) {
            (Some(_), _) => {
                (s.record)(format!("{i}: open {name} again"));
                let again = d.keyspace_with(name, self.options(sp.kind));
                assert!(
                    matches!(again, Err(Error::InvalidArgument(_))),
                    "{ctx} keyspace_with of an open keyspace {name}: {:?}",
                    again.map(|_| ())
                );
                let h = d
                    .keyspace(name)
                    .unwrap_or_else(|e| panic!("{ctx} keyspace {name}: {e}"));
                self.spaces[k].handle = Some(h);
            }
            (None, exists) => {
                (s.record)(format!(
                    "{i}: {} {name}",
                    if exists { "open" } else { "create" }
                ));
                self.open(d, k, ctx);
                self.check_full(k, ctx);
                let listed = d.list_keyspaces();
                assert!(
                    listed.iter().any(|n| n == name),
                    "{ctx} {name} listed: {listed:?}"
                );
            }
        }
    }

    /// Drops a keyspace (or fails to drop a missing one). A handle from
    /// before the drop fails, alone or in a batch, and an iterator from
    /// before goes on reading what it saw.
    fn drop_one(&mut self, rng: &mut SmallRng, s: &Step, default: &Model) {
        let (d, i, ctx) = (s.d, s.i, s.ctx);
        let k = rng.gen_range(0..self.spaces.len());
        let name = self.spaces[k].name;
        if !self.spaces[k].exists {
            (s.record)(format!("{i}: drop missing {name}"));
            let r = d.drop_keyspace(name);
            assert!(
                matches!(r, Err(Error::InvalidArgument(_))),
                "{ctx} drop of missing keyspace {name}: {r:?}"
            );
            return;
        }
        // Dropped unopened (left so since the reopen) one time in four.
        if self.spaces[k].handle.is_none() && rng.gen_range(0..4) != 0 {
            self.open(d, k, ctx);
        }
        let before = self.visible(k);
        let old = self.spaces[k].handle.take();
        let it = match &old {
            Some(h) if rng.gen_bool(0.3) => {
                Some(h.iter().unwrap_or_else(|e| panic!("{ctx} iter: {e}")))
            }
            _ => None,
        };
        (s.record)(format!(
            "{i}: drop {name}{}{}",
            if old.is_none() { " (unopened)" } else { "" },
            if it.is_some() {
                " with an iterator open"
            } else {
                ""
            }
        ));
        d.drop_keyspace(name)
            .unwrap_or_else(|e| panic!("{ctx} drop_keyspace {name}: {e}"));
        let sp = &mut self.spaces[k];
        sp.exists = false;
        sp.model.clear();
        sp.incarnation += 1;
        self.totals.drops += 1;
        let listed = d.list_keyspaces();
        assert!(
            !listed.iter().any(|n| n == name),
            "{ctx} {name} still listed: {listed:?}"
        );
        if let Some(h) = old {
            let r = h.put(b"after-drop", b"x");
            assert!(
                matches!(r, Err(Error::InvalidArgument(_))),
                "{ctx} put through a dropped keyspace's handle: {r:?}"
            );
            assert!(
                matches!(h.get(b"k0001"), Err(Error::InvalidArgument(_))),
                "{ctx} get through a dropped keyspace's handle"
            );
            let probe = b"k0001-drop-probe".to_vec();
            let mut b = WriteBatch::new();
            b.put(&probe, b"x");
            b.put_cf(&h, &probe, b"x");
            let r = d.write(b);
            assert!(
                matches!(r, Err(Error::InvalidArgument(_))),
                "{ctx} batch through a dropped keyspace's handle: {r:?}"
            );
            let got = d.get(&probe).unwrap_or_else(|e| panic!("{ctx} get: {e}"));
            assert_eq!(
                got.as_ref(),
                default.get(&probe),
                "{ctx} a refused batch wrote"
            );
        }
        if let Some(it) = it {
            let got = collect_all(Ok(it), &format!("{ctx} iterator from before the drop"));
            crate::common::assert_same_items(
                &got,
                before.iter(),
                &format!("{ctx} iterator of {name} from before the drop"),
            );
        }
    }

    /// One batch across the default keyspace and the existing named ones:
    /// puts, deletes, range deletes and merges, several per keyspace and
    /// per key. A merge into the TTL keyspace refuses the whole batch.
    fn batch(&mut self, rng: &mut SmallRng, s: &Step, default: &mut Model) {
        let (d, i, ctx) = (s.d, s.i, s.ctx);
        let mut targets: Vec<Option<usize>> = vec![None];
        for k in 0..self.spaces.len() {
            if self.spaces[k].exists {
                self.open(d, k, ctx);
                targets.push(Some(k));
            }
        }
        let now = self.now();
        let mut b = WriteBatch::new();
        let mut staged_default = default.clone();
        let mut staged: Vec<Stamped> = self.spaces.iter().map(|s| s.model.clone()).collect();
        let mut refused = false;
        let mut desc = Vec::new();
        for _ in 0..rng.gen_range(1..16) {
            let t = targets[rng.gen_range(0..targets.len())];
            let name = t.map_or("default", |k| self.spaces[k].name);
            let key = gen_key(rng);
            let mut what = rng.gen_range(0..20);
            if t.is_some_and(|k| self.spaces[k].kind == Kind::Ttl) && (2..5).contains(&what) {
                // Merges into the TTL keyspace, which refuse the batch: rarer.
                what = if rng.gen_range(0..3) == 0 { 2 } else { 19 };
            }
            match (what, t) {
                (0..=1, _) => {
                    let r = gen_delete_range(rng);
                    desc.push(format!("{name}: delete_range{}", show_range(&r)));
                    match t {
                        None => {
                            if rng.gen_bool(0.5) {
                                b.delete_range(r.clone());
                            } else {
                                b.delete_range_cf(&d.default_keyspace(), r.clone());
                            }
                            staged_default
                                .retain(|k, _| !crate::model_parts::checks::in_bounds(k, &r));
                        }
                        Some(k) => {
                            b.delete_range_cf(self.handle(k), r.clone());
                            delete_range_in(&mut staged[k], &r);
                        }
                    }
                }
                (2..=4, None) if self.default_merges => {
                    let o = gen_operand(rng, i);
                    desc.push(format!("default: merge {} {}", show(&key), show(&o)));
                    b.merge(&key, &o);
                    model_merge(&mut staged_default, key, &o);
                }
                (2..=4, Some(k)) => {
                    let o = self.operand(k, rng, i);
                    desc.push(format!("{name}: merge {} {}", show(&key), show(&o)));
                    b.merge_cf(self.handle(k), &key, &o);
                    if self.spaces[k].kind == Kind::Ttl {
                        refused = true;
                    } else {
                        merge_into(self.spaces[k].kind, &mut staged[k], key, &o, now);
                    }
                }
                (5..=8, None) => {
                    desc.push(format!("default: del {}", show(&key)));
                    b.delete(&key);
                    staged_default.remove(&key);
                }
                (5..=8, Some(k)) => {
                    desc.push(format!("{name}: del {}", show(&key)));
                    b.delete_cf(self.handle(k), &key);
                    staged[k].remove(&key);
                }
                (_, None) => {
                    let v = gen_value(rng, s.seed, i);
                    desc.push(format!("default: put {}", show(&key)));
                    if rng.gen_bool(0.5) {
                        b.put(&key, &v);
                    } else {
                        b.put_cf(&d.default_keyspace(), &key, &v);
                    }
                    staged_default.insert(key, v);
                }
                (_, Some(k)) => {
                    let v = self.value(k, rng, s.seed, i);
                    desc.push(format!("{name}: put {}", show(&key)));
                    b.put_cf(self.handle(k), &key, &v);
                    staged[k].insert(key, (v, now));
                }
            }
        }
        (s.record)(format!(
            "{i}: cross-keyspace batch{} [{}]",
            if refused { " (refused)" } else { "" },
            desc.join(", ")
        ));
        self.totals.batches += 1;
        let r = d.write(b);
        if refused {
            self.totals.refused_batches += 1;
            assert!(
                matches!(r, Err(Error::InvalidArgument(_))),
                "{ctx} a batch merging into the TTL keyspace: {r:?}"
            );
        } else {
            r.unwrap_or_else(|e| panic!("{ctx} cross-keyspace batch: {e}"));
            *default = staged_default;
            for (sp, m) in self.spaces.iter_mut().zip(staged) {
                sp.model = m;
            }
        }
    }

    /// Reads every existing keyspace through one snapshot (or none): a
    /// bounded iteration in a random direction, point and multi reads,
    /// all at the snapshot's sequence.
    fn snapshot_reads(
        &mut self,
        rng: &mut SmallRng,
        s: &Step,
        snapshots: &[(Snapshot, Model, usize)],
    ) {
        let (d, i, ctx) = (s.d, s.i, s.ctx);
        let snap = (!snapshots.is_empty() && rng.gen_bool(0.8))
            .then(|| &snapshots[rng.gen_range(0..snapshots.len())]);
        let mut ro = ReadOptions::default().fill_cache(rng.gen_bool(0.5));
        if let Some((sn, _, _)) = snap {
            ro = ro.snapshot(sn);
        }
        let mut range = (Bound::Unbounded, Bound::Unbounded);
        if rng.gen_bool(0.5) {
            let l = gen_key(rng);
            range.0 = Bound::Included(l.clone());
            ro = ro.lower_bound(l);
        }
        if rng.gen_bool(0.5) {
            let u = gen_key(rng);
            range.1 = Bound::Excluded(u.clone());
            ro = ro.upper_bound(u);
        }
        let at = snap.map(|s| s.2);
        (s.record)(format!(
            "{i}: read every keyspace at {} in {}",
            at.map_or("now".to_string(), |a| format!("snapshot@{a}")),
            show_range(&range)
        ));
        let mut reads: Vec<(String, sievedb::Keyspace, Model)> = Vec::new();
        let default_model = match snap {
            Some((_, m, _)) => m.clone(),
            None => Model::new(),
        };
        if snap.is_some() {
            reads.push(("default".into(), d.default_keyspace(), default_model));
        }
        for k in 0..self.spaces.len() {
            if self.spaces[k].exists {
                let h = self.open(d, k, ctx);
                let m = match at {
                    Some(at) => self.snapshot_model(at, k),
                    None => self.visible(k),
                };
                reads.push((self.spaces[k].name.to_string(), h, m));
            }
        }
        for (name, h, m) in &reads {
            let ctx = format!(
                "{ctx} keyspace {name} at {}",
                at.map_or("now".to_string(), |a| format!("snapshot@{a}"))
            );
            if rng.gen_bool(0.5) {
                check_range(h.iter_opt(&ro), m, &range, &ctx);
            } else {
                check_range_rev(h.iter_opt(&ro), m, &range, &ctx);
            }
            let keys: Vec<Vec<u8>> = (0..4).map(|_| key_of(rng, m, 0.5)).collect();
            let got = h
                .multi_get_opt(&keys, &ro)
                .unwrap_or_else(|e| panic!("{ctx} multi_get_opt: {e}"));
            for (key, g) in keys.iter().zip(&got) {
                assert_eq!(g.as_ref(), m.get(key), "{ctx} multi_get_opt {}", show(key));
                let one = h
                    .get_opt(key, &ro)
                    .unwrap_or_else(|e| panic!("{ctx} get_opt: {e}"));
                assert_eq!(one.as_ref(), m.get(key), "{ctx} get_opt {}", show(key));
            }
        }
    }
}
