//! A linearizability checker for histories of registers ([`super::history`]).
//!
//! Each key is checked on its own (linearizability is compositional: a
//! history is linearizable iff its restriction to every object is). For one
//! key the search is Wing & Gong's, with Lowe's memoization: a depth-first
//! search that linearizes, one at a time, an operation that no pending
//! operation precedes in real time (it was invoked before the earliest
//! completion among those not yet linearized), as long as the register's
//! model accepts its answer; a (set of linearized operations, register
//! value) pair already explored is not explored again. The set is a bitset
//! identified by a 128-bit Zobrist hash.
//!
//! An operation whose outcome is unknown never completed: it may be
//! linearized anywhere after its invocation, with the effect the model
//! gives it, or not at all (the search succeeds once every *completed*
//! operation is linearized: whatever is left is left out). An unknown get
//! says nothing, and a failed operation did nothing: both are dropped.
//!
//! Unknown operations would make the search exponential in their number
//! (each may be in or out of the linearized set at any point), so it only
//! considers linearizations in a normal form that loses none: an unknown
//! operation changes the register, and is immediately followed by another
//! unknown one or by a completed one that its state *before* it would not
//! allow. (Given any linearization, an unknown `u` followed by a completed
//! `k` that the state before `u` allows can be swapped with `k` when `k`
//! is a get or a compare-and-swap that failed, which leave the register as
//! it was, and removed when `k` writes, since `k`'s write hides `u`'s; each
//! step moves a completed operation earlier or removes an unknown one, so
//! this ends, and in the normal form.) Likewise values that no get returned
//! and no compare expects are all one value to the model, and of unknown
//! operations alike (the same write, after that merge), the search uses
//! the earliest invoked first: swapping two alike gives the same states.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use super::history::{Entry, Op, Outcome, Ret};

/// The register model's operations, as the search sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A get that returned this.
    Read(Option<u64>),
    /// A put (acknowledged or not: the effect is the same).
    Write(u64),
    /// A compare-and-swap that answered whether it swapped.
    Cas {
        expect: Option<u64>,
        new: u64,
        swapped: bool,
    },
    /// A compare-and-swap whose answer is unknown.
    CasUnknown { expect: Option<u64>, new: u64 },
}

#[derive(Clone, Copy, Debug)]
struct COp {
    /// Index in the entries given.
    id: usize,
    inv: u64,
    /// `u64::MAX` for an operation that never completed.
    ret: u64,
    kind: Kind,
}

impl COp {
    fn known(&self) -> bool {
        self.ret != u64::MAX
    }
}

/// The register after `kind`, or `None` if `kind`'s answer is impossible
/// when it holds `state`.
fn step(state: Option<u64>, kind: Kind) -> Option<Option<u64>> {
    match kind {
        Kind::Read(v) => (v == state).then_some(state),
        Kind::Write(v) => Some(Some(v)),
        Kind::Cas {
            expect,
            new,
            swapped,
        } => match (state == expect, swapped) {
            (true, true) => Some(Some(new)),
            (false, false) => Some(state),
            _ => None,
        },
        Kind::CasUnknown { expect, new } => Some(if state == expect { Some(new) } else { state }),
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX - 1)
}

/// The operation of `e` for the search, or `None` if it says nothing.
fn convert(id: usize, e: &Entry) -> Option<COp> {
    let known = |kind| {
        Some(COp {
            id,
            inv: nanos(e.invoke),
            // Completed operations complete before "never".
            ret: e.complete.map_or(u64::MAX - 1, nanos),
            kind,
        })
    };
    let unknown = |kind| {
        Some(COp {
            id,
            inv: nanos(e.invoke),
            ret: u64::MAX,
            kind,
        })
    };
    match (e.op, e.outcome) {
        (_, Outcome::Fail) | (Op::Get, Outcome::Unknown) => None,
        (Op::Get, Outcome::Ok(Ret::Value(v))) => known(Kind::Read(v)),
        (Op::Put(v), Outcome::Ok(Ret::Written)) => known(Kind::Write(v)),
        (Op::Put(v), Outcome::Unknown) => unknown(Kind::Write(v)),
        (Op::Cas { expect, new }, Outcome::Ok(Ret::Swapped(swapped))) => known(Kind::Cas {
            expect,
            new,
            swapped,
        }),
        (Op::Cas { expect, new }, Outcome::Unknown) => unknown(Kind::CasUnknown { expect, new }),
        (op, Outcome::Ok(r)) => panic!("entry {id}: {op:?} cannot answer {r:?}"),
    }
}

/// What the check of one key found.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Linearizable: `order` is one linearization (indices into the entries
    /// given, unknown operations left out of it were not applied), and
    /// `last` the register's value after it.
    Linearizable {
        order: Vec<usize>,
        last: Option<u64>,
    },
    /// Not linearizable: `explanation` says where the search got stuck.
    Violation { explanation: String },
    /// The search explored its budget of states without an answer.
    Inconclusive,
}

/// The check of one key.
#[derive(Debug, Clone)]
pub struct KeyReport {
    /// The key.
    pub key: usize,
    /// The operations the search saw (completed, and unknown writes).
    pub ops: usize,
    /// Of which unknown (never completed).
    pub unknown: usize,
    /// The (set, value) states the search explored.
    pub states: usize,
    /// How long it took.
    pub elapsed: Duration,
    /// What it found.
    pub verdict: Verdict,
}

impl KeyReport {
    /// Whether the key's history is linearizable.
    pub fn ok(&self) -> bool {
        matches!(self.verdict, Verdict::Linearizable { .. })
    }
}

/// A 64-bit mix (splitmix64's), for the Zobrist keys.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A value no get returned and no compare expects: the model cannot tell
/// such values apart. (Histories must not write `u64::MAX` itself.)
const UNSEEN: u64 = u64::MAX;

/// Maps the values of `ops` that nothing observes to [`UNSEEN`].
fn merge_unseen(ops: &mut [COp]) {
    let mut seen = HashSet::new();
    for o in ops.iter() {
        match o.kind {
            Kind::Read(Some(v))
            | Kind::Cas {
                expect: Some(v), ..
            }
            | Kind::CasUnknown {
                expect: Some(v), ..
            } => {
                seen.insert(v);
            }
            _ => {}
        }
    }
    let map = |v: &mut u64| {
        if !seen.contains(v) {
            *v = UNSEEN;
        }
    };
    for o in ops.iter_mut() {
        match &mut o.kind {
            Kind::Write(v) | Kind::Cas { new: v, .. } | Kind::CasUnknown { new: v, .. } => map(v),
            Kind::Read(_) => {}
        }
    }
}

/// The memo's key: the completed operations linearized (a hash), the
/// register, the constraint.
type Key = (u128, Option<u64>, Option<Option<u64>>);

/// For each key, the sets of unknown operations used with it, none a subset
/// of another.
type Memo = HashMap<Key, Vec<Vec<u64>>>;

/// Records a state, unless one that dominates it was seen: whether it is
/// new.
fn visit(seen: &mut Memo, key: Key, used: &[u64]) -> bool {
    let subset = |a: &[u64], b: &[u64]| a.iter().zip(b).all(|(x, y)| x & !y == 0);
    let sets = seen.entry(key).or_default();
    if sets.iter().any(|s| subset(s, used)) {
        return false;
    }
    sets.retain(|s| !subset(used, s));
    sets.push(used.to_vec());
    true
}

/// One step of the search's path.
struct Choice {
    /// Where in the candidate order the choice was (`pass * n + i`).
    pos: usize,
    /// The register before it.
    before: Option<u64>,
    /// The constraint before it.
    constraint: Option<Option<u64>>,
}

/// Checks the operations of `key` among `entries`, the register holding
/// `initial` first, exploring at most `budget` states.
pub fn check_key(entries: &[Entry], key: usize, initial: Option<u64>, budget: usize) -> KeyReport {
    let started = Instant::now();
    let mut ops: Vec<COp> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.key == key)
        .filter_map(|(i, e)| convert(i, e))
        .collect();
    merge_unseen(&mut ops);
    ops.sort_by_key(|o| (o.inv, o.ret));
    let n = ops.len();
    let unknown = ops.iter().filter(|o| !o.known()).count();
    // Completed operations by completion time: the first not linearized
    // bounds which operations may go next.
    let mut by_ret: Vec<usize> = (0..n).filter(|&i| ops[i].known()).collect();
    by_ret.sort_by_key(|&i| ops[i].ret);
    let mut seed = 0x5eed_u64;
    // Completed operations are in the memo's key by a Zobrist hash of the
    // set; unknown ones by a bitset (`slot`), since a state is dominated by
    // one with the same key and a subset of its unknown operations used
    // (what the latter can do, the former can too, by leaving them out).
    let zobrist: Vec<u128> = (0..n)
        .map(|_| (u128::from(splitmix(&mut seed)) << 64) | u128::from(splitmix(&mut seed)))
        .collect();
    let mut slot = vec![usize::MAX; n];
    for (s, i) in (0..n).filter(|&i| !ops[i].known()).enumerate() {
        slot[i] = s;
    }
    let mut used = vec![0u64; unknown.div_ceil(64).max(1)];
    // Unknown operations alike (once both are invoked, either may take the
    // other's place) are used in the order of their invocations: the
    // previous one alike must be used first.
    let mut twin = vec![None; n];
    for i in (0..n).filter(|&i| !ops[i].known()) {
        twin[i] = (0..i)
            .rev()
            .find(|&j| !ops[j].known() && ops[j].kind == ops[i].kind);
    }
    let flip = |used: &mut [u64], s: usize| used[s / 64] ^= 1 << (s % 64);

    let mut linearized = vec![false; n];
    let mut hash: u128 = 0;
    let mut state = initial;
    // After an unknown operation: the register before it, which must not
    // allow the next completed operation (the normal form).
    let mut constraint: Option<Option<u64>> = None;
    let mut known_left = n - unknown;
    let mut seen: Memo = HashMap::new();
    let mut states = 0;
    // The first pass over the candidates tries completed operations, the
    // second unknown ones.
    let mut path: Vec<Choice> = Vec::new();
    let mut cursor = 0;
    let mut deepest: Vec<usize> = Vec::new();
    let mut deepest_known = 0;
    let report = |verdict, states| KeyReport {
        key,
        ops: n,
        unknown,
        states,
        elapsed: started.elapsed(),
        verdict,
    };
    loop {
        if known_left == 0 {
            let order: Vec<usize> = path.iter().map(|c| ops[c.pos % n].id).collect();
            // Replayed with the values as written (`UNSEEN` merged some).
            let last = order.iter().fold(initial, |s, &id| {
                let o = convert(id, &entries[id]).expect("a linearized operation");
                step(s, o.kind).unwrap_or(s)
            });
            return report(Verdict::Linearizable { order, last }, states);
        }
        if states >= budget {
            return report(Verdict::Inconclusive, states);
        }
        let bound = by_ret
            .iter()
            .find(|&&i| !linearized[i])
            .map_or(u64::MAX, |&i| ops[i].ret);
        let mut chosen = None;
        let mut pos = cursor;
        while pos < 2 * n {
            let (pass, i) = (pos / n, pos % n);
            let o = &ops[i];
            if o.inv > bound {
                // Sorted by invocation: nothing further may go next either.
                if pass == 0 {
                    pos = n;
                    continue;
                }
                break;
            }
            if !linearized[i] && (pass == 0) == o.known() {
                let allowed = if o.known() {
                    constraint.is_none_or(|before| step(before, o.kind).is_none())
                } else {
                    twin[i].is_none_or(|j| linearized[j])
                };
                if let Some(next) = step(state, o.kind).filter(|_| allowed) {
                    let changes = o.known() || next != state;
                    let c = (!o.known()).then_some(state);
                    if changes {
                        let h = if o.known() { hash ^ zobrist[i] } else { hash };
                        if !o.known() {
                            flip(&mut used, slot[i]);
                        }
                        let fresh = visit(&mut seen, (h, next, c), &used);
                        states += usize::from(fresh);
                        if !o.known() {
                            flip(&mut used, slot[i]);
                        }
                        if fresh {
                            chosen = Some((pos, next, c));
                            break;
                        }
                    }
                }
            }
            pos += 1;
        }
        if let Some((pos, next, c)) = chosen {
            let i = pos % n;
            linearized[i] = true;
            if ops[i].known() {
                hash ^= zobrist[i];
            } else {
                flip(&mut used, slot[i]);
            }
            path.push(Choice {
                pos,
                before: state,
                constraint,
            });
            state = next;
            constraint = c;
            if ops[i].known() {
                known_left -= 1;
            }
            cursor = 0;
            let done = n - unknown - known_left;
            if done > deepest_known {
                deepest_known = done;
                deepest = path.iter().map(|c| c.pos % n).collect();
            }
        } else if let Some(c) = path.pop() {
            let i = c.pos % n;
            linearized[i] = false;
            if ops[i].known() {
                hash ^= zobrist[i];
            } else {
                flip(&mut used, slot[i]);
            }
            state = c.before;
            constraint = c.constraint;
            if ops[i].known() {
                known_left += 1;
            }
            cursor = c.pos + 1;
        } else {
            let explanation = explain(entries, &ops, &deepest, initial);
            return report(Verdict::Violation { explanation }, states);
        }
    }
}

/// Where the search got stuck: the longest linearizable prefix it found
/// (in completed operations), and the operations that could not follow it.
fn explain(entries: &[Entry], ops: &[COp], deepest: &[usize], initial: Option<u64>) -> String {
    let mut state = initial;
    let mut done = vec![false; ops.len()];
    for &i in deepest {
        // With the values as written (`UNSEEN` merged some).
        let o = convert(ops[i].id, &entries[ops[i].id]).expect("a linearized operation");
        state = step(state, o.kind).unwrap_or(state);
        done[i] = true;
    }
    let bound = (0..ops.len())
        .filter(|&i| !done[i] && ops[i].known())
        .map(|i| ops[i].ret)
        .min()
        .unwrap_or(u64::MAX);
    let mut s = format!(
        "no linearization: the longest prefix found linearizes {} of {} completed operations \
         and leaves the register at {state:?}; then none of these can go next:\n",
        deepest.iter().filter(|&&i| ops[i].known()).count(),
        ops.iter().filter(|o| o.known()).count(),
    );
    let stuck: Vec<usize> = (0..ops.len())
        .filter(|&i| !done[i] && ops[i].inv <= bound)
        .collect();
    for &i in stuck.iter().take(12) {
        s.push_str(&format!("  {:?}\n", entries[ops[i].id]));
    }
    let tail = deepest.len().saturating_sub(6);
    s.push_str("after, last of the prefix:\n");
    for &i in &deepest[tail..] {
        s.push_str(&format!("  {:?}\n", entries[ops[i].id]));
    }
    s
}

/// Checks every key of `entries` (each register holding `None` first),
/// each with a budget of `budget` states.
pub fn check(entries: &[Entry], budget: usize) -> Vec<KeyReport> {
    let keys: BTreeMap<usize, ()> = entries.iter().map(|e| (e.key, ())).collect();
    keys.keys()
        .map(|&k| check_key(entries, k, None, budget))
        .collect()
}

/// Panics, with what the checker found, unless every key's history is
/// linearizable; else returns the reports.
pub fn assert_linearizable(entries: &[Entry], budget: usize) -> Vec<KeyReport> {
    let reports = check(entries, budget);
    for r in &reports {
        match &r.verdict {
            Verdict::Linearizable { .. } => {}
            Verdict::Violation { explanation } => {
                panic!(
                    "key {}: not linearizable ({} ops, {} unknown, {} states): {explanation}",
                    r.key, r.ops, r.unknown, r.states
                )
            }
            Verdict::Inconclusive => panic!(
                "key {}: no verdict within {} states ({} ops, {} unknown)",
                r.key, r.states, r.ops, r.unknown
            ),
        }
    }
    reports
}
