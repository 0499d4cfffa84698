//! A cheap clock for the sampled per-lookup time breakdown.
//!
//! On x86_64 it reads the time-stamp counter (a few nanoseconds per read,
//! constant-rate on every CPU of the last decade); elsewhere it falls back to
//! a monotonic [`Instant`]. Ticks are converted to nanoseconds with a rate
//! calibrated once per process against [`Instant`].

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The current tick count. Only differences of two readings on the same
/// machine mean anything.
#[inline]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC is part of the x86_64 baseline; it reads a counter
        // and touches no memory.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Nanoseconds per tick, measured once (over about 5 ms) on first use.
///
/// Both clocks run on while the thread is preempted, so only the two
/// readings at the ends can skew the rate: each is an [`Instant`] between
/// two tick readings, the narrowest of several tries ([`paired_reading`]).
/// (Read one after the other, a preemption of 10 µs between them would be
/// a 0.2% error, enough to shorten [`spin_wait_ns`] below its delay.)
pub fn ns_per_tick() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        let (t0, c0) = paired_reading();
        while t0.elapsed() < Duration::from_millis(5) {
            std::hint::spin_loop();
        }
        let (t1, c1) = paired_reading();
        let (ns, c) = ((t1 - t0).as_nanos() as f64, c1.wrapping_sub(c0));
        if c == 0 {
            1.0
        } else {
            ns / c as f64
        }
    })
}

/// An [`Instant`] and the tick count at the same moment: the midpoint of
/// two tick readings around it, from the narrowest of a few tries (a try the
/// thread was preempted in is wide).
fn paired_reading() -> (Instant, u64) {
    let mut best: Option<(u64, Instant, u64)> = None;
    for _ in 0..PAIRING_TRIES {
        let before = ticks();
        let t = Instant::now();
        let width = ticks().wrapping_sub(before);
        if best.is_none_or(|(w, _, _)| width < w) {
            best = Some((width, t, before.wrapping_add(width / 2)));
        }
    }
    #[expect(
        clippy::expect_used,
        reason = "PAIRING_TRIES is at least 1 and the first try always sets `best`"
    )]
    let (_, t, c) = best.expect("at least one try");
    (t, c)
}

/// Tries of [`paired_reading`]: one of them is almost surely not preempted.
const PAIRING_TRIES: usize = 16;

/// Busy-waits for `ns` nanoseconds on the tick clock, without yielding the
/// CPU: unlike `thread::sleep`, it can wait tens of nanoseconds. Returns at
/// once for 0. The wait is rounded up to whole ticks plus one, so it lasts at
/// least `ns` up to the calibration error of [`ns_per_tick`] (parts per
/// million), and overshoots by about two clock reads (~20 ns on an x86_64
/// VM, where a spin on [`Instant`] with a spin-loop hint per round overshot
/// 70 ns by about 60 ns). The first call of the process pays the calibration
/// (about 5 ms).
#[inline]
pub fn spin_wait_ns(ns: u64) {
    if ns == 0 {
        return;
    }
    let rate = ns_per_tick();
    #[expect(
        clippy::cast_sign_loss,
        reason = "a wait in nanoseconds over a positive rate is not negative"
    )]
    let wait = (ns as f64 / rate).ceil() as u64 + 1;
    // A spin-loop hint (PAUSE) can take tens of nanoseconds: take it only
    // while more than this many ticks remain, so short waits stay precise.
    #[expect(
        clippy::cast_sign_loss,
        reason = "the margin and the rate are positive"
    )]
    let hint_margin = (SPIN_HINT_MARGIN_NS / rate) as u64;
    let t0 = ticks();
    loop {
        let elapsed = ticks().wrapping_sub(t0);
        if elapsed >= wait {
            return;
        }
        if wait - elapsed > hint_margin {
            std::hint::spin_loop();
        }
    }
}

/// Remaining wait (ns) below which [`spin_wait_ns`] polls the clock without
/// a spin-loop hint.
const SPIN_HINT_MARGIN_NS: f64 = 250.0;

/// Ticks a sampled lookup spent per phase (see [`crate::stats::LookupBreakdown`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTicks {
    /// Hashing the key (computing digests).
    pub hash: u64,
    /// Probing filters, hashing excluded.
    pub filter: u64,
    /// Finding the file (fence pointers) and the block (index block).
    pub index: u64,
    /// Reading and searching data blocks (block cache or file).
    pub data: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_advance_and_convert() {
        let rate = ns_per_tick();
        assert!(rate > 0.0 && rate.is_finite());
        let (t0, c0) = (Instant::now(), ticks());
        std::thread::sleep(Duration::from_millis(20));
        let ns = ticks().wrapping_sub(c0) as f64 * rate;
        let real = t0.elapsed().as_nanos() as f64;
        // Generous bounds: the test only guards against a wrong unit.
        assert!(ns > real * 0.5 && ns < real * 2.0, "{ns} vs {real}");
    }

    #[test]
    fn spin_wait_lasts_at_least_the_delay() {
        spin_wait_ns(1); // calibrates
        for ns in [0u64, 70, 1_000, 10_000, 200_000] {
            let t0 = Instant::now();
            spin_wait_ns(ns);
            let waited = t0.elapsed().as_nanos() as f64;
            // Only the tick rate's calibration error (ppm) may shorten it.
            assert!(waited >= ns as f64 * 0.999, "{ns} ns: waited {waited}");
        }
    }
}
