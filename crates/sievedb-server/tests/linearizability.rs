//! The linearizability checker itself (`support/linearizability.rs`):
//! small hand-made histories that must pass and that must fail, and
//! simulated registers (one linearizable, with random delays and unknown
//! outcomes; mutated copies of its histories that are not).

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::history::{Entry, History, Op, Outcome, Ret};
use support::linearizability::{check, check_key, Verdict};
use support::rng::Rng;

const BUDGET: usize = 2_000_000;

/// An operation of `client` on key 0 from `inv` to `ret` ms (`None`: never
/// answered).
fn op(client: usize, op: Op, inv: u64, ret: Option<u64>, outcome: Outcome) -> Entry {
    Entry {
        client,
        key: 0,
        op,
        invoke: Duration::from_millis(inv),
        complete: ret.map(Duration::from_millis),
        outcome,
    }
}

fn put(c: usize, v: u64, inv: u64, ret: u64) -> Entry {
    op(c, Op::Put(v), inv, Some(ret), Outcome::Ok(Ret::Written))
}

fn get(c: usize, v: Option<u64>, inv: u64, ret: u64) -> Entry {
    op(c, Op::Get, inv, Some(ret), Outcome::Ok(Ret::Value(v)))
}

fn cas(c: usize, expect: Option<u64>, new: u64, swapped: bool, inv: u64, ret: u64) -> Entry {
    op(
        c,
        Op::Cas { expect, new },
        inv,
        Some(ret),
        Outcome::Ok(Ret::Swapped(swapped)),
    )
}

fn unknown(c: usize, o: Op, inv: u64) -> Entry {
    op(c, o, inv, None, Outcome::Unknown)
}

fn linearizable(h: &[Entry]) -> bool {
    let r = check_key(h, 0, None, BUDGET);
    match r.verdict {
        Verdict::Linearizable { .. } => true,
        Verdict::Violation { explanation } => {
            eprintln!("violation, as expected or not: {explanation}");
            false
        }
        Verdict::Inconclusive => panic!("inconclusive on a tiny history"),
    }
}

#[test]
fn sequential_histories() {
    assert!(linearizable(&[]));
    assert!(linearizable(&[get(0, None, 0, 1)]));
    assert!(linearizable(&[put(0, 1, 0, 1), get(1, Some(1), 2, 3)]));
    assert!(linearizable(&[
        put(0, 1, 0, 1),
        put(0, 2, 2, 3),
        get(1, Some(2), 4, 5)
    ]));
    // A read of a value nobody wrote.
    assert!(!linearizable(&[put(0, 1, 0, 1), get(1, Some(9), 2, 3)]));
}

#[test]
fn stale_read_fails() {
    assert!(!linearizable(&[
        put(0, 1, 0, 1),
        put(0, 2, 2, 3),
        get(1, Some(1), 4, 5)
    ]));
    // Acknowledged, then never seen: a lost write.
    assert!(!linearizable(&[put(0, 1, 0, 1), get(1, None, 2, 3)]));
    assert!(!linearizable(&[
        put(0, 1, 0, 1),
        put(1, 2, 2, 3),
        get(0, Some(2), 4, 5),
        get(1, Some(1), 6, 7)
    ]));
}

#[test]
fn concurrent_overlaps() {
    // A read concurrent with a write sees the old value or the new one.
    assert!(linearizable(&[put(0, 1, 0, 10), get(1, None, 2, 3)]));
    assert!(linearizable(&[put(0, 1, 0, 10), get(1, Some(1), 2, 3)]));
    // ... but once one read saw the new value, a later one cannot see the
    // old.
    assert!(!linearizable(&[
        put(0, 1, 0, 10),
        get(1, Some(1), 2, 3),
        get(2, None, 4, 5)
    ]));
    assert!(linearizable(&[
        put(0, 1, 0, 10),
        get(1, None, 2, 3),
        get(2, Some(1), 4, 5)
    ]));
    // Two concurrent writes: any order, but one order for every reader.
    assert!(linearizable(&[
        put(0, 1, 0, 10),
        put(1, 2, 0, 10),
        get(2, Some(1), 11, 12),
        get(3, Some(1), 13, 14)
    ]));
    assert!(linearizable(&[
        put(0, 1, 0, 10),
        put(1, 2, 0, 10),
        get(2, Some(1), 5, 6),
        get(3, Some(2), 7, 8)
    ]));
    assert!(!linearizable(&[
        put(0, 1, 0, 10),
        put(1, 2, 0, 10),
        get(2, Some(1), 11, 12),
        get(3, Some(2), 13, 14)
    ]));
    // Overlapping reads that disagree about two writes' order.
    assert!(!linearizable(&[
        put(0, 1, 0, 20),
        put(1, 2, 0, 20),
        get(2, Some(1), 1, 5),
        get(2, Some(2), 6, 9),
        get(3, Some(2), 1, 5),
        get(3, Some(1), 6, 9),
    ]));
    // Equal stamps count as concurrent.
    assert!(linearizable(&[put(0, 1, 0, 5), get(1, None, 5, 6)]));
}

#[test]
fn compare_and_swap() {
    assert!(linearizable(&[
        cas(0, None, 1, true, 0, 1),
        get(1, Some(1), 2, 3)
    ]));
    assert!(!linearizable(&[
        put(0, 1, 0, 1),
        cas(0, None, 2, true, 2, 3)
    ]));
    // Two concurrent swaps from the same value cannot both succeed.
    assert!(!linearizable(&[
        cas(0, None, 1, true, 0, 10),
        cas(1, None, 2, true, 0, 10)
    ]));
    assert!(linearizable(&[
        cas(0, None, 1, true, 0, 10),
        cas(1, None, 2, false, 0, 10),
        get(2, Some(1), 11, 12)
    ]));
    // Answered false, but its swap happened.
    assert!(!linearizable(&[
        cas(0, None, 5, false, 0, 1),
        get(1, Some(5), 2, 3)
    ]));
    // Answered false although the compare held.
    assert!(!linearizable(&[
        put(0, 1, 0, 1),
        cas(0, Some(1), 2, false, 2, 3)
    ]));
    // False is fine when a concurrent write made the compare fail.
    assert!(linearizable(&[
        put(0, 1, 0, 1),
        put(1, 3, 2, 10),
        cas(0, Some(1), 2, false, 2, 3)
    ]));
    // A counter of swaps: each success is one increment.
    assert!(linearizable(&[
        cas(0, None, 1, true, 0, 1),
        cas(0, Some(1), 2, true, 2, 3),
        cas(1, Some(1), 2, false, 2, 4),
        get(0, Some(2), 5, 6)
    ]));
}

#[test]
fn unknown_operations() {
    // An unknown write may have happened...
    assert!(linearizable(&[
        unknown(0, Op::Put(1), 0),
        get(1, Some(1), 5, 6)
    ]));
    // ... or not,
    assert!(linearizable(&[
        unknown(0, Op::Put(1), 0),
        get(1, None, 5, 6)
    ]));
    // ... or later than anything else answered,
    assert!(linearizable(&[
        unknown(0, Op::Put(1), 0),
        get(1, None, 5, 6),
        get(1, Some(1), 7, 8),
        get(1, Some(1), 9, 10)
    ]));
    // ... but only once: not seen, then seen, then not.
    assert!(!linearizable(&[
        unknown(0, Op::Put(1), 0),
        get(1, None, 5, 6),
        get(1, Some(1), 7, 8),
        get(1, None, 9, 10)
    ]));
    // ... and never before it was invoked.
    assert!(!linearizable(&[
        get(1, Some(1), 0, 1),
        unknown(0, Op::Put(1), 2)
    ]));
    // An unknown swap takes effect only if its compare holds.
    assert!(linearizable(&[
        unknown(
            0,
            Op::Cas {
                expect: None,
                new: 1
            },
            0
        ),
        get(1, Some(1), 5, 6)
    ]));
    assert!(!linearizable(&[
        put(1, 7, 0, 1),
        unknown(
            0,
            Op::Cas {
                expect: None,
                new: 1
            },
            2
        ),
        get(1, Some(1), 5, 6)
    ]));
    // An unknown read says nothing; a failed write did nothing.
    assert!(linearizable(&[
        put(0, 1, 0, 1),
        op(1, Op::Get, 2, None, Outcome::Unknown),
        op(1, Op::Put(2), 3, Some(4), Outcome::Fail),
        get(0, Some(1), 5, 6)
    ]));
    assert!(!linearizable(&[
        op(1, Op::Put(2), 0, Some(1), Outcome::Fail),
        get(0, Some(2), 5, 6)
    ]));
    // Many unknown writes left out: the search must stay small.
    let mut h: Vec<Entry> = (0..40)
        .map(|i| unknown(i, Op::Put(100 + i as u64), 0))
        .collect();
    h.push(put(50, 1, 1, 2));
    h.extend((0..20).map(|i| get(51, Some(1), 3 + 2 * i, 4 + 2 * i)));
    let r = check_key(&h, 0, None, BUDGET);
    assert!(r.ok(), "{:?}", r.verdict);
    assert!(r.states < 10_000, "{} states", r.states);
}

/// Reads after a full restart extend the history: they see the last write,
/// or an unknown write that may have taken effect later than everything
/// answered before (the restarted cluster may commit it then).
#[test]
fn reads_after_a_restart() {
    let before = [
        put(0, 1, 0, 1),
        unknown(1, Op::Put(2), 2),
        get(2, Some(1), 3, 4),
        unknown(1, Op::Put(3), 0),
    ];
    let with = |v: Option<u64>| {
        let mut h = before.to_vec();
        h.push(get(9, v, 100, 101));
        h.push(get(9, v, 102, 103));
        linearizable(&h)
    };
    assert!(with(Some(1)));
    assert!(with(Some(2)));
    assert!(with(Some(3)));
    // Acknowledged, and lost by the restart.
    assert!(!with(None));
    assert!(!with(Some(4)));
    // Two reads after the restart that disagree.
    let mut h = before.to_vec();
    h.push(get(9, Some(2), 100, 101));
    h.push(get(9, Some(1), 102, 103));
    assert!(!linearizable(&h));
}

#[test]
fn keys_are_checked_independently() {
    let mut h = vec![put(0, 1, 0, 1), get(1, Some(1), 2, 3)];
    let mut other = vec![put(0, 2, 0, 1), get(1, None, 2, 3)];
    for e in &mut other {
        e.key = 1;
    }
    h.extend(other);
    let reports = check(&h, BUDGET);
    assert_eq!(reports.len(), 2);
    assert!(reports[0].ok());
    assert!(!reports[1].ok());
}

/// A history of `clients` clients running `n` operations each on one
/// register, simulated in virtual time: each operation takes effect at a
/// random point between its invocation and its answer; 1 in 10 writes is
/// never answered (and then takes effect or not) and 1 in 20 fails.
fn simulate(seed: u64, clients: usize, n: usize) -> Vec<Entry> {
    struct Sim {
        entry: Entry,
        at: u64,
        applied: bool,
    }
    let mut rng = Rng::new(seed);
    let mut next_value = 1;
    let mut sims = Vec::new();
    for client in 0..clients {
        let mut t = rng.below(20);
        for _ in 0..n {
            let inv = t + rng.below(30);
            let at = inv + 1 + rng.below(60);
            let ret = at + 1 + rng.below(60);
            t = ret;
            let o = match rng.below(10) {
                0..=3 => Op::Get,
                4..=6 => {
                    next_value += 1;
                    Op::Put(next_value)
                }
                _ => {
                    next_value += 1;
                    let back = rng.below(4);
                    let expect = (back < 3 && next_value > back + 2).then(|| next_value - back - 2);
                    Op::Cas {
                        expect,
                        new: next_value,
                    }
                }
            };
            let (complete, outcome, applied) = match rng.below(20) {
                0 | 1 if o != Op::Get => (None, Outcome::Unknown, rng.chance(50)),
                2 if o != Op::Get => (Some(ret), Outcome::Fail, false),
                _ => (Some(ret), Outcome::Unknown, true),
            };
            sims.push(Sim {
                entry: Entry {
                    client,
                    key: 0,
                    op: o,
                    invoke: Duration::from_micros(inv),
                    complete: complete.map(Duration::from_micros),
                    outcome,
                },
                at,
                applied,
            });
        }
    }
    sims.sort_by_key(|s| s.at);
    let mut reg = None;
    for s in &mut sims {
        if !s.applied {
            continue;
        }
        let ret = match s.entry.op {
            Op::Get => Ret::Value(reg),
            Op::Put(v) => {
                reg = Some(v);
                Ret::Written
            }
            Op::Cas { expect, new } => {
                let ok = reg == expect;
                if ok {
                    reg = Some(new);
                }
                Ret::Swapped(ok)
            }
        };
        if s.entry.complete.is_some() && s.entry.outcome == Outcome::Unknown {
            s.entry.outcome = Outcome::Ok(ret);
        }
    }
    let mut h: Vec<Entry> = sims.into_iter().map(|s| s.entry).collect();
    h.sort_by_key(|e| e.invoke);
    h
}

/// Whether `e` is a completed write that took effect.
fn wrote(e: &Entry) -> Option<u64> {
    match (e.op, e.outcome) {
        (Op::Put(v), Outcome::Ok(_))
        | (Op::Cas { new: v, .. }, Outcome::Ok(Ret::Swapped(true))) => Some(v),
        _ => None,
    }
}

fn before(a: &Entry, b: &Entry) -> bool {
    a.complete.is_some_and(|c| c < b.invoke)
}

/// Makes a read stale: one that follows writes W1 then W2 in real time now
/// returns W1's value. Not linearizable, whatever else happened. `false` if
/// the history has no such triple.
fn make_stale_read(h: &mut [Entry]) -> bool {
    for r in (0..h.len()).rev() {
        if !matches!(h[r].outcome, Outcome::Ok(Ret::Value(_))) {
            continue;
        }
        for w2 in 0..h.len() {
            if wrote(&h[w2]).is_none() || !before(&h[w2], &h[r]) {
                continue;
            }
            if let Some(w1) =
                (0..h.len()).find(|&w1| wrote(&h[w1]).is_some() && before(&h[w1], &h[w2]))
            {
                h[r].outcome = Outcome::Ok(Ret::Value(wrote(&h[w1])));
                return true;
            }
        }
    }
    false
}

/// Makes a swap whose value was read answer `false` (its swap happened
/// nevertheless). `false` if the history has none.
fn make_false_swap(h: &mut [Entry]) -> bool {
    for c in 0..h.len() {
        let (Op::Cas { new, .. }, Outcome::Ok(Ret::Swapped(true))) = (h[c].op, h[c].outcome) else {
            continue;
        };
        if h.iter()
            .any(|e| e.outcome == Outcome::Ok(Ret::Value(Some(new))))
        {
            h[c].outcome = Outcome::Ok(Ret::Swapped(false));
            return true;
        }
    }
    false
}

#[test]
fn simulated_linearizable_registers_pass_and_mutated_ones_fail() {
    let started = Instant::now();
    let (mut ops, mut states, mut stale, mut swaps) = (0, 0, 0, 0);
    for seed in 0..60 {
        let h = simulate(seed, 5, 30);
        let r = check_key(&h, 0, None, BUDGET);
        assert!(r.ok(), "seed {seed}: {:?}", r.verdict);
        ops += r.ops;
        states += r.states;
        let mut m = h.clone();
        if make_stale_read(&mut m) {
            stale += 1;
            let r = check_key(&m, 0, None, BUDGET);

            assert!(
                matches!(r.verdict, Verdict::Violation { .. }),
                "seed {seed}: a stale read passed: {:?}",
                r.verdict
            );
        }
        let mut m = h.clone();
        if make_false_swap(&mut m) {
            swaps += 1;
            let r = check_key(&m, 0, None, BUDGET);

            assert!(
                matches!(r.verdict, Verdict::Violation { .. }),
                "seed {seed}: a false swap passed: {:?}",
                r.verdict
            );
        }
    }
    assert!(stale >= 50 && swaps >= 10, "mutated {stale} and {swaps}");
    eprintln!(
        "60 simulated histories ({ops} ops, {states} states), {stale} stale reads and \
         {swaps} false swaps caught, in {:?}",
        started.elapsed()
    );
}

/// A register behind a mutex, used by threads with random delays before and
/// after the point where an operation takes effect, recorded in a real
/// [`History`]; some answers are dropped (unknown), and then half the time
/// the operation is not applied.
#[test]
fn a_threaded_register_passes_and_its_mutation_fails() {
    let history = Arc::new(History::new());
    let reg = Arc::new(Mutex::new(None::<u64>));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (history, reg) = (history.clone(), reg.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(1000 + t as u64);
                for i in 0..150u64 {
                    let value = (t as u64 + 1) * 1_000_000 + i;
                    let o = match rng.below(3) {
                        0 => Op::Get,
                        1 => Op::Put(value),
                        _ => Op::Cas {
                            expect: *reg.lock().expect("reg"),
                            new: value,
                        },
                    };
                    let p = history.invoke(t, 0, o);
                    std::thread::sleep(Duration::from_micros(rng.below(200)));
                    let lost = o != Op::Get && rng.chance(5);
                    let ret = (!lost || rng.chance(50)).then(|| {
                        let mut r = reg.lock().expect("reg");
                        match o {
                            Op::Get => Ret::Value(*r),
                            Op::Put(v) => {
                                *r = Some(v);
                                Ret::Written
                            }
                            Op::Cas { expect, new } => {
                                let ok = *r == expect;
                                if ok {
                                    *r = Some(new);
                                }
                                Ret::Swapped(ok)
                            }
                        }
                    });
                    std::thread::sleep(Duration::from_micros(rng.below(200)));
                    let outcome = match ret {
                        Some(r) if !lost => Outcome::Ok(r),
                        _ => Outcome::Unknown,
                    };
                    history.complete(p, outcome);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    let mut h = history.entries();
    // Unknown operations never answered: no completion.
    for e in &mut h {
        if e.outcome == Outcome::Unknown {
            e.complete = None;
        }
    }
    let started = Instant::now();
    let r = check_key(&h, 0, None, BUDGET);
    assert!(r.ok(), "{:?}", r.verdict);
    eprintln!(
        "threaded: {} ops ({} unknown), {} states, {:?}",
        r.ops,
        r.unknown,
        r.states,
        started.elapsed()
    );
    assert!(make_stale_read(&mut h));
    let r = check_key(&h, 0, None, BUDGET);
    assert!(
        matches!(r.verdict, Verdict::Violation { .. }),
        "{:?}",
        r.verdict
    );
}
