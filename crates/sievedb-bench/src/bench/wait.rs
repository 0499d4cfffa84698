//! `waitforcompaction`: flush, then wait until no compaction is due or
//! running. The wait of a large load can last minutes, so with
//! `--stats-interval` it prints a line per interval: the compaction still
//! owed and how fast it went down, what the engine wrote, and the tree's
//! shape (each as far as the engine reports it).

use super::{Measurement, Workload};
use crate::engines::{Engine, EngineResult};
use crate::progress::Progress;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Runs `waitforcompaction` on `engine`; the measurement's JSON carries
/// `pending_compaction_bytes_at_start` (what the wait pays off, when the
/// engine estimates it).
pub(super) fn wait_for_compactions(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    label: String,
) -> EngineResult<Measurement> {
    let first = Look::of(engine.as_ref());
    let owed = first.owed;
    let pb = Progress::watch(w.progress, label, watcher(Arc::clone(engine), first));
    let mut m = super::timed_once(|| engine.wait_for_compactions());
    pb.finish();
    if let (Ok(m), Some(owed)) = (&mut m, owed) {
        m.extra = Some(json!({ "pending_compaction_bytes_at_start": owed }));
        m.note = Some(format!("{} MB of compaction owed at the start", mb(owed)));
    }
    m
}

/// What the engine reports of its background work at one look.
#[derive(Clone, Debug, Default, PartialEq)]
struct Look {
    /// Compaction owed, in bytes.
    owed: Option<u64>,
    /// Bytes written to files since the engine opened.
    written: Option<u64>,
    /// Table files per level.
    files: Option<Vec<u64>>,
}

impl Look {
    fn of(engine: &dyn Engine) -> Look {
        Look {
            owed: engine.pending_compaction_bytes(),
            written: engine.stats().map(|s| s.bytes_written),
            files: engine.files_per_level(),
        }
    }
}

/// The describer of [`Progress::watch`] for a wait on `engine`, which
/// looked like `first` when it began: each call looks at the engine and
/// tells the change since the previous look.
fn watcher(
    engine: Arc<dyn Engine>,
    first: Look,
) -> impl FnMut(Duration) -> String + Send + 'static {
    let mut last = (Duration::ZERO, first);
    move |elapsed| {
        let now = Look::of(engine.as_ref());
        let line = describe(&last.1, &now, elapsed.saturating_sub(last.0));
        last = (elapsed, now);
        line
    }
}

/// `O MB owed (R MB/s paid off); W MB/s written; files/level a/b/c` over
/// `interval` from `before` to `now`, leaving out what the engine does not
/// report.
fn describe(before: &Look, now: &Look, interval: Duration) -> String {
    let secs = interval.as_secs_f64().max(1e-9);
    let mut parts = Vec::new();
    if let Some(owed) = now.owed {
        let mut s = format!("{} MB owed", mb(owed));
        if let Some(b) = before.owed {
            let paid = (b as f64 - owed as f64) / 1e6 / secs;
            s.push_str(&format!(" ({paid:.0} MB/s paid off)"));
        }
        parts.push(s);
    }
    if let (Some(b), Some(n)) = (before.written, now.written) {
        parts.push(format!(
            "{:.0} MB/s written",
            n.saturating_sub(b) as f64 / 1e6 / secs
        ));
    }
    if let Some(files) = &now.files {
        let f: Vec<String> = files.iter().map(u64::to_string).collect();
        parts.push(format!("files/level {}", f.join("/")));
    }
    if parts.is_empty() {
        "waiting (the engine reports no compaction state)".into()
    } else {
        parts.join("; ")
    }
}

/// `bytes` in MB (10^6), no decimals.
fn mb(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_tells_the_debt_its_rate_what_was_written_and_the_shape() {
        let before = Look {
            owed: Some(3_000_000_000),
            written: Some(10_000_000_000),
            files: Some(vec![4, 10]),
        };
        let now = Look {
            owed: Some(2_600_000_000),
            written: Some(10_500_000_000),
            files: Some(vec![0, 8, 120]),
        };
        assert_eq!(
            describe(&before, &now, Duration::from_secs(2)),
            "2600 MB owed (200 MB/s paid off); 250 MB/s written; files/level 0/8/120"
        );
    }

    #[test]
    fn a_line_leaves_out_what_the_engine_does_not_report() {
        let before = Look::default();
        let now = Look {
            files: Some(vec![1, 2]),
            ..Look::default()
        };
        assert_eq!(
            describe(&before, &now, Duration::from_secs(1)),
            "files/level 1/2"
        );
        assert_eq!(
            describe(&before, &Look::default(), Duration::from_secs(1)),
            "waiting (the engine reports no compaction state)"
        );
        // A debt that grows (a flush lands) is paid off at a negative rate.
        let up = Look {
            owed: Some(2_000_000),
            ..Look::default()
        };
        let down = Look {
            owed: Some(1_000_000),
            ..Look::default()
        };
        assert_eq!(
            describe(&down, &up, Duration::from_secs(1)),
            "2 MB owed (-1 MB/s paid off)"
        );
    }
}
