//! Progress of a running benchmark, on stderr: an `indicatif` bar when stderr
//! is a terminal, or one line every `--stats-interval` seconds (db_bench's
//! `--stats_interval_seconds`), or nothing. Stdout (the report, `--json`)
//! never carries progress.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a benchmark shows its progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressMode {
    /// Nothing.
    Hidden,
    /// An `indicatif` bar on stderr.
    Bar,
    /// A line on stderr every this often (ops done, ops/s in the interval and overall).
    Lines(Duration),
}

impl ProgressMode {
    /// The mode of `--stats-interval SECS` (0 = not given): lines every SECS
    /// seconds when given (also on a terminal: asked for explicitly), else a
    /// bar when stderr is a terminal, else nothing (so scripted runs stay
    /// quiet).
    pub fn choose(stats_interval_secs: u64, stderr_is_terminal: bool) -> Self {
        if stats_interval_secs > 0 {
            ProgressMode::Lines(Duration::from_secs(stats_interval_secs))
        } else if stderr_is_terminal {
            ProgressMode::Bar
        } else {
            ProgressMode::Hidden
        }
    }
}

/// The progress display of one benchmark. Clones share it (reader threads
/// each hold one); [`Progress::finish`] (or dropping the last clone) ends it.
#[derive(Clone)]
pub struct Progress(Shown);

#[derive(Clone)]
enum Shown {
    Hidden,
    Bar(ProgressBar),
    Lines(Arc<LineReporter>),
}

impl Progress {
    /// A display that shows nothing.
    pub fn hidden() -> Self {
        Progress(Shown::Hidden)
    }

    /// Starts a display of `total` operations (0 = unknown) named `label`.
    pub fn start(mode: ProgressMode, total: u64, label: String) -> Self {
        match mode {
            ProgressMode::Hidden => Progress::hidden(),
            ProgressMode::Bar => Progress(Shown::Bar(bar(total, label))),
            ProgressMode::Lines(every) => {
                let mut last = (Duration::ZERO, 0u64);
                let line = move |done: u64, elapsed: Duration| {
                    let (at, before) = last;
                    last = (elapsed, done);
                    progress_line(&label, done, total, done - before, elapsed - at, elapsed)
                };
                Progress(Shown::Lines(Arc::new(LineReporter::start(every, line))))
            }
        }
    }

    /// Starts a display of a step of unknown length named `label` whose
    /// state `describe` tells (called once per line, with the seconds since
    /// the start): `LABEL: after S s; DESCRIPTION` every interval in
    /// [`ProgressMode::Lines`], a spinner on a terminal.
    pub fn watch(
        mode: ProgressMode,
        label: String,
        mut describe: impl FnMut(Duration) -> String + Send + 'static,
    ) -> Self {
        match mode {
            ProgressMode::Lines(every) => {
                let line = move |_: u64, elapsed: Duration| {
                    format!(
                        "{label}: after {:.1} s; {}",
                        elapsed.as_secs_f64(),
                        describe(elapsed)
                    )
                };
                Progress(Shown::Lines(Arc::new(LineReporter::start(every, line))))
            }
            _ => {
                let p = Progress::start(mode, 0, label);
                p.tick_steadily();
                p
            }
        }
    }

    /// Counts `n` more operations done.
    pub fn inc(&self, n: u64) {
        match &self.0 {
            Shown::Hidden => {}
            Shown::Bar(pb) => pb.inc(n),
            Shown::Lines(r) => {
                r.shared.done.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// Marks an operation of unknown length as running (a spinner on a terminal).
    pub fn tick_steadily(&self) {
        if let Shown::Bar(pb) = &self.0 {
            pb.enable_steady_tick(Duration::from_millis(200));
        }
    }

    /// Ends the display: clears the bar, or stops the periodic lines.
    pub fn finish(&self) {
        match &self.0 {
            Shown::Hidden => {}
            Shown::Bar(pb) => pb.finish_and_clear(),
            Shown::Lines(r) => r.stop(),
        }
    }
}

/// An `indicatif` bar of `len` operations.
fn bar(len: u64, label: String) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:<20} [{bar:40}] {pos:>9}/{len:9} {per_sec} eta {eta}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(label);
    pb
}

/// What the reporting thread and the benchmark share.
struct Shared {
    /// Operations done so far.
    done: AtomicU64,
    /// Set (under the mutex) when the benchmark ends.
    stopped: Mutex<bool>,
    wake: Condvar,
}

/// A thread printing one progress line every interval until stopped.
struct LineReporter {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl LineReporter {
    /// Starts the thread; every `every` it prints `line(operations done,
    /// time since the start)`.
    fn start(every: Duration, line: impl FnMut(u64, Duration) -> String + Send + 'static) -> Self {
        let shared = Arc::new(Shared {
            done: AtomicU64::new(0),
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::spawn(move || report_lines(&s, every, line));
        LineReporter {
            shared,
            thread: Mutex::new(Some(thread)),
        }
    }

    /// Stops the thread (no final line: the result line follows) and waits for it.
    fn stop(&self) {
        if let Ok(mut stopped) = self.shared.stopped.lock() {
            *stopped = true;
        }
        self.shared.wake.notify_all();
        let handle = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

impl Drop for LineReporter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The reporting loop: sleeps `every` (or until stopped), then prints `line`.
fn report_lines(s: &Shared, every: Duration, mut line: impl FnMut(u64, Duration) -> String) {
    let start = Instant::now();
    let mut last_at = start;
    let Ok(mut stopped) = s.stopped.lock() else {
        return;
    };
    loop {
        let deadline = last_at + every;
        while !*stopped {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            stopped = match s.wake.wait_timeout(stopped, deadline - now) {
                Ok((g, _)) => g,
                Err(_) => return,
            };
        }
        if *stopped {
            return;
        }
        last_at = Instant::now();
        eprintln!("{}", line(s.done.load(Ordering::Relaxed), last_at - start));
    }
}

/// One progress line: `LABEL: DONE[/TOTAL] ops after S s; R ops/s in the
/// last I s, O ops/s overall`.
pub fn progress_line(
    label: &str,
    done: u64,
    total: u64,
    interval_ops: u64,
    interval: Duration,
    elapsed: Duration,
) -> String {
    let rate = |ops: u64, d: Duration| {
        let s = d.as_secs_f64();
        if s > 0.0 {
            ops as f64 / s
        } else {
            0.0
        }
    };
    let of = if total > 0 {
        format!("/{total}")
    } else {
        String::new()
    };
    format!(
        "{label}: {done}{of} ops after {:.1} s; {:.0} ops/s in the last {:.1} s, {:.0} ops/s overall",
        elapsed.as_secs_f64(),
        rate(interval_ops, interval),
        interval.as_secs_f64(),
        rate(done, elapsed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_follows_the_flag_then_the_terminal() {
        assert_eq!(
            ProgressMode::choose(5, false),
            ProgressMode::Lines(Duration::from_secs(5))
        );
        assert_eq!(
            ProgressMode::choose(5, true),
            ProgressMode::Lines(Duration::from_secs(5))
        );
        assert_eq!(ProgressMode::choose(0, true), ProgressMode::Bar);
        assert_eq!(ProgressMode::choose(0, false), ProgressMode::Hidden);
    }

    #[test]
    fn line_has_ops_interval_and_overall_rates() {
        let l = progress_line(
            "sievedb fillseq",
            3000,
            10_000,
            1000,
            Duration::from_secs(1),
            Duration::from_secs(2),
        );
        assert_eq!(
            l,
            "sievedb fillseq: 3000/10000 ops after 2.0 s; 1000 ops/s in the last 1.0 s, \
             1500 ops/s overall"
        );
        let l = progress_line("x", 5, 0, 5, Duration::ZERO, Duration::ZERO);
        assert!(l.starts_with("x: 5 ops after 0.0 s; 0 ops/s"), "{l}");
    }

    #[test]
    fn line_reporter_counts_and_stops_promptly() {
        let p = Progress::start(
            ProgressMode::Lines(Duration::from_secs(3600)),
            10,
            "t".into(),
        );
        let q = p.clone();
        q.inc(4);
        p.inc(3);
        if let Shown::Lines(r) = &p.0 {
            assert_eq!(r.shared.done.load(Ordering::Relaxed), 7);
        } else {
            panic!("not a line reporter");
        }
        let t = Instant::now();
        p.finish();
        p.finish(); // idempotent
        assert!(t.elapsed() < Duration::from_secs(60));
    }

    #[test]
    fn a_watch_describes_the_step_every_interval_until_finished() {
        let calls = Arc::new(AtomicU64::new(0));
        let c = Arc::clone(&calls);
        let p = Progress::watch(
            ProgressMode::Lines(Duration::from_millis(5)),
            "w".into(),
            move |elapsed| {
                c.fetch_add(1, Ordering::Relaxed);
                format!("{elapsed:?}")
            },
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        while calls.load(Ordering::Relaxed) < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        p.finish();
        let seen = calls.load(Ordering::Relaxed);
        assert!(seen >= 2, "{seen} lines");
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(calls.load(Ordering::Relaxed), seen, "a line after finish");
        // Without lines, the describer is never called.
        let q = Progress::watch(ProgressMode::Hidden, "h".into(), |_| unreachable!());
        q.finish();
    }
}
