use rand::{rngs::SmallRng, seq::SliceRandom, Rng, SeedableRng};
use sievedb::{Db, Options};
use std::time::Instant;
fn key(i: u64, miss: bool) -> Vec<u8> {
    let mut k = format!("{:023}", i).into_bytes();
    k.push(if miss { b'1' } else { b'0' });
    k
}
fn main() -> sievedb::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or("/tmp/smoke-db".into());
    let n: u64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    let _ = std::fs::remove_dir_all(&dir);
    let db = Db::open(&dir, Options::default())?;
    let mut rng = SmallRng::seed_from_u64(1);
    let mut order: Vec<u64> = (0..n).collect();
    order.shuffle(&mut rng);
    let val = vec![7u8; 100];
    let t = Instant::now();
    for &i in &order {
        db.put(key(i, false), &val)?;
    }
    let s = t.elapsed().as_secs_f64();
    println!("fillrandom {:.0} ops/s", n as f64 / s);
    std::thread::sleep(std::time::Duration::from_secs(2));
    for miss in [false, true] {
        let before = db.stats();
        let t = Instant::now();
        let mut found = 0;
        for _ in 0..n {
            let i = rng.gen_range(0..n);
            if db.get(key(i, miss))?.is_some() {
                found += 1;
            }
        }
        let s = t.elapsed().as_secs_f64();
        let d = db.stats().delta_since(&before);
        println!("read miss={miss} {:.0} ops/s found {found} probes {} fp {} blocks {} cache hits {} misses {}", n as f64 / s, d.filter_probes, d.filter_false_positives, d.data_block_reads, d.block_cache_hits, d.block_cache_misses);
    }
    for l in &db.stats().levels {
        println!(
            "L{} files {} runs {} bytes {}",
            l.level, l.files, l.runs, l.bytes
        );
    }
    Ok(())
}
