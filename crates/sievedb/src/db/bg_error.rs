//! Background errors: what stops writes, and how a recoverable one is cleared.
//!
//! A failed WAL write, memtable switch, flush, compaction or MANIFEST append
//! sets the background error: from then on no write is acknowledged (they get
//! [`Error::ReadOnly`]), reads go on. An error of a full disk
//! ([`Error::is_recoverable`]) can be cleared by [`DbInner::resume`], called
//! by the user or retried by the flush thread every
//! [`Options::bg_error_resume_retry_interval`]; any other error stays until
//! the database is reopened.
//!
//! Resuming never acknowledges a write behind a damaged WAL record: the
//! active memtable moves to a fresh WAL and every memtable is flushed (so the
//! WALs that saw the failure become obsolete) before writes are accepted again.
//! A full disk that a flush or compaction met before a successful resume,
//! but reports after it, is not recorded ([`DbInner::set_job_error`]).

use super::*;

impl DbInner {
    /// Records a background/WAL error: the database refuses writes. A fatal
    /// error replaces a recoverable one (a full disk followed by EIO must not
    /// be resumed); otherwise the first error stays.
    pub(super) fn set_bg_error(&self, e: Error) -> Error {
        self.record_error(e, None)
    }

    /// [`set_bg_error`](Self::set_bg_error), or for a job that started when
    /// `started` resumes had succeeded, [`set_job_error`](Self::set_job_error).
    fn record_error(&self, e: Error, started: Option<u64>) -> Error {
        let mut bg = self.bg.lock();
        let stale = e.is_recoverable() && started.is_some_and(|s| s != bg.resumes);
        let replace = !stale
            && match &bg.error {
                None => true,
                Some(old) => old.is_recoverable() && !e.is_recoverable(),
            };
        if replace {
            if bg.error.is_none() {
                bump(&self.counters.bg_errors, 1);
            }
            bg.error = Some(e.clone());
            bg.resume_attempts = 0;
            self.bg_failed.store(true, Ordering::Release);
        }
        self.done_cv.notify_all();
        self.bg_cv.notify_all();
        e
    }

    /// Records the error of a background flush or compaction that started
    /// when `started` resumes had succeeded. A full disk (a recoverable
    /// error) met by a job that started before the last successful resume
    /// is not recorded: that resume found room again after the job failed
    /// (its failure may reach here only after the resume, the job
    /// preempted in between), and setting the error again would refuse
    /// writes that `resume` had just accepted. The job's work is not lost:
    /// a failed flush leaves its memtable to be flushed again, a failed
    /// compaction its inputs to be compacted again, and a disk still full
    /// fails that next attempt, which records it.
    pub(super) fn set_job_error(&self, e: Error, started: u64) {
        self.record_error(e, Some(started));
    }

    /// Runs a flush or compaction; a panic in it (a bug, or a custom
    /// [`FileSystem`] that panics) becomes an [`Error::Poisoned`] result, so
    /// that it sets the background error instead of killing a thread that
    /// stalled writers and waiters would wait on forever.
    pub(super) fn unless_panicked(
        &self,
        what: &str,
        work: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
            Err(Error::Poisoned(format!(
                "a {what} panicked; writes are refused until the database is reopened"
            )))
        })
    }

    /// The error writes must fail with, if the background error is set.
    pub(super) fn write_error(&self) -> Option<Error> {
        if !self.bg_failed.load(Ordering::Acquire) {
            return None;
        }
        let bg = self.bg.lock();
        bg.error.as_ref().map(|e| match e {
            Error::Poisoned(_) => e.clone(),
            e => Error::ReadOnly(e.to_string()),
        })
    }

    /// See [`Db::resume`].
    pub(super) fn resume(&self) -> Result<()> {
        {
            let mut bg = self.bg.lock();
            loop {
                if bg.shutdown {
                    return Err(Error::Closed);
                }
                let Some(e) = &bg.error else { return Ok(()) };
                if !e.is_recoverable() {
                    return Err(e.clone());
                }
                if !bg.resuming {
                    break;
                }
                // Another resume is running: its outcome is ours.
                self.done_cv.wait(&mut bg);
            }
            bg.resuming = true;
        }
        let r = self.flush_past_failure();
        let mut bg = self.bg.lock();
        bg.resuming = false;
        let r = match r {
            // A fatal error set meanwhile (e.g. by a compaction) wins.
            #[expect(clippy::expect_used, reason = "the guard checked that an error is set")]
            Ok(()) if bg.error.as_ref().is_some_and(|e| !e.is_recoverable()) => {
                Err(bg.error.clone().expect("checked"))
            }
            Ok(()) => {
                bg.error = None;
                bg.resume_attempts = 0;
                bg.resumes += 1;
                self.bg_failed.store(false, Ordering::Release);
                bump(&self.counters.bg_error_resumes, 1);
                Ok(())
            }
            Err(e) => {
                if bg.error.as_ref().is_none_or(|old| old.is_recoverable()) {
                    bg.error = Some(e.clone());
                }
                Err(e)
            }
        };
        self.done_cv.notify_all();
        self.bg_cv.notify_all();
        r
    }

    /// Moves the active memtable to a fresh WAL (without syncing the old one,
    /// which may end in a torn record: its acknowledged writes are in the
    /// memtables) and flushes every memtable, so that no WAL that saw the
    /// failure is needed any more.
    fn flush_past_failure(&self) -> Result<()> {
        {
            let mut wal = self.wal.lock();
            self.switch_memtable_inner(&mut wal, false)?;
        }
        while self.oldest_frozen().is_some() {
            self.flush_oldest()?;
        }
        Ok(())
    }

    /// Called by the flush thread with the background lock held while the
    /// background error is set: waits one retry interval and, if the error is
    /// still there, recoverable and attempts remain, tries to resume.
    /// Returns the lock (re-taken after the attempt).
    pub(super) fn auto_resume<'a>(
        &'a self,
        mut bg: parking_lot::MutexGuard<'a, BgState>,
    ) -> parking_lot::MutexGuard<'a, BgState> {
        let due = |bg: &BgState| {
            !bg.shutdown
                && !bg.resuming
                && bg.resume_attempts < self.opts.max_bg_error_resume_count
                && bg.error.as_ref().is_some_and(Error::is_recoverable)
        };
        if !due(&bg) {
            self.bg_cv.wait(&mut bg);
            return bg;
        }
        let deadline = std::time::Instant::now() + self.opts.bg_error_resume_retry_interval;
        while due(&bg) && !self.bg_cv.wait_until(&mut bg, deadline).timed_out() {}
        // The wait ended early only if the attempt is no longer due.
        if !due(&bg) {
            return bg;
        }
        bg.resume_attempts += 1;
        drop(bg);
        let _ = self.resume();
        self.bg.lock()
    }
}
