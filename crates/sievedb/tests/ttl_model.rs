//! Model-based test of TTL: random writes, deletes, clock advances, flushes,
//! compactions (manual and periodic) and reopens, against a map of
//! `key -> (value, write time)` read with expiry applied. Every read path is
//! compared after each step; snapshots are checked against a frozen copy of
//! the model (with expiry at the read's time).
//!
//! Scale with `SIEVEDB_MODEL_OPS` (default 1500 per seed) and pin one seed
//! with `SIEVEDB_SEED`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::{env_usize, seeds, small_options, ManualClock};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{CompactionStyle, Db, Options, Snapshot, WriteBatch};

const TTL: u64 = 60;
const KEY_SPACE: u32 = 300;

/// Newest version of each live key: value and write time.
type TtlModel = BTreeMap<Vec<u8>, (Vec<u8>, u64)>;

/// What a read at `now` sees of `m`.
fn visible(m: &TtlModel, now: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter()
        .filter(|(_, (_, t))| t + TTL > now)
        .map(|(k, (v, _))| (k.clone(), v.clone()))
        .collect()
}

fn key(rng: &mut SmallRng) -> Vec<u8> {
    format!("k{:04}", rng.gen_range(0..KEY_SPACE)).into_bytes()
}

fn options(style: CompactionStyle, clock: &Arc<ManualClock>) -> Options {
    Options {
        ttl: Some(Duration::from_secs(TTL)),
        clock: clock.clone(),
        ..small_options(style)
    }
}

fn check(db: &Db, m: &TtlModel, now: u64, rng: &mut SmallRng, ctx: &str) {
    let want = visible(m, now);
    let got: Vec<_> = db.iter().unwrap().map(|kv| kv.unwrap()).collect();
    assert_eq!(got, want, "{ctx}: iter");
    let mut rev: Vec<_> = db.iter().unwrap().rev().map(|kv| kv.unwrap()).collect();
    rev.reverse();
    assert_eq!(rev, want, "{ctx}: rev");
    for _ in 0..20 {
        let k = key(rng);
        let expect = m
            .get(&k)
            .filter(|(_, t)| t + TTL > now)
            .map(|(v, _)| v.clone());
        assert_eq!(
            db.get(&k).unwrap(),
            expect,
            "{ctx}: get {}",
            String::from_utf8_lossy(&k)
        );
    }
    let lo = key(rng);
    let got: Vec<_> = db
        .range(lo.as_slice()..)
        .unwrap()
        .rev()
        .map(|kv| kv.unwrap())
        .collect();
    let mut expect: Vec<_> = want.into_iter().filter(|(k, _)| *k >= lo).collect();
    expect.reverse();
    assert_eq!(
        got,
        expect,
        "{ctx}: range rev from {}",
        String::from_utf8_lossy(&lo)
    );
}

fn run(style: CompactionStyle, seed: u64, ops: usize, dir: &Path) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let clock = ManualClock::new(1_700_000_000);
    let mut db = Some(Db::open(dir, options(style, &clock)).unwrap());
    let mut m = TtlModel::new();
    let mut snaps: Vec<(Snapshot, TtlModel)> = Vec::new();
    for op in 0..ops {
        let d = db.as_ref().unwrap();
        let now = clock.now();
        let ctx = format!("{style:?} seed {seed} op {op}");
        match rng.gen_range(0..100) {
            0..=49 => {
                let (k, v) = (key(&mut rng), format!("v{op}").into_bytes());
                d.put(&k, &v).unwrap();
                m.insert(k, (v, now));
            }
            50..=59 => {
                let k = key(&mut rng);
                d.delete(&k).unwrap();
                m.remove(&k);
            }
            60..=64 => {
                let mut b = WriteBatch::new();
                for _ in 0..rng.gen_range(1..5) {
                    let (k, v) = (key(&mut rng), format!("b{op}").into_bytes());
                    b.put(&k, &v);
                    m.insert(k, (v, now));
                }
                d.write(b).unwrap();
            }
            65..=79 => clock.advance(rng.gen_range(0..=TTL / 4)),
            80..=83 => d.flush().unwrap(),
            84..=86 => d.compact_range::<&[u8], _>(..).unwrap(),
            87..=89 => d.wait_for_compactions().unwrap(),
            90..=91 => {
                snaps.clear();
                db.take().unwrap().close().unwrap();
                db = Some(Db::open(dir, options(style, &clock)).unwrap());
            }
            92..=94 if snaps.len() < 3 => snaps.push((d.snapshot(), m.clone())),
            92..=94 => {
                snaps.remove(0);
            }
            _ => {
                for (s, frozen) in &snaps {
                    let got: Vec<_> = s.iter().unwrap().map(|kv| kv.unwrap()).collect();
                    assert_eq!(got, visible(frozen, now), "{ctx}: snapshot");
                }
            }
        }
        check(db.as_ref().unwrap(), &m, clock.now(), &mut rng, &ctx);
    }
    // Everything expires; compactions leave nothing on disk.
    clock.advance(TTL);
    snaps.clear();
    let d = db.unwrap();
    d.compact_range::<&[u8], _>(..).unwrap();
    d.wait_for_compactions().unwrap();
    assert_eq!(d.iter().unwrap().count(), 0);
    let entries: u64 = d.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 0, "{style:?} seed {seed}: {}", d.stats());
}

#[test]
fn ttl_model_leveling() {
    let ops = env_usize("SIEVEDB_MODEL_OPS", 1500);
    for seed in seeds(&[1, 2]) {
        let dir = tempfile::tempdir().unwrap();
        run(CompactionStyle::Leveling, seed, ops, dir.path());
    }
}

#[test]
fn ttl_model_tiering() {
    let ops = env_usize("SIEVEDB_MODEL_OPS", 1500);
    for seed in seeds(&[3]) {
        let dir = tempfile::tempdir().unwrap();
        run(CompactionStyle::Tiering, seed, ops, dir.path());
    }
}
