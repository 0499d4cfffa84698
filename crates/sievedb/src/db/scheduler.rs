//! Background work: waiting on it, errors, and the compaction threads.

use super::*;

impl BgState {
    /// Why a wait for background work must end: the background error, or
    /// [`Error::Closed`] once the database shuts down.
    pub(super) fn stopped(&self) -> Result<()> {
        match (&self.error, self.shutdown) {
            (Some(e), _) => Err(e.clone()),
            (None, true) => Err(Error::Closed),
            (None, false) => Ok(()),
        }
    }
}

impl DbInner {
    /// Wakes the background threads and waits until `done` holds (checked
    /// under the background lock), a background error stops work, or the
    /// database closes.
    pub(super) fn wait_background(&self, mut done: impl FnMut(&BgState) -> bool) -> Result<()> {
        let mut bg = self.bg.lock();
        loop {
            bg.stopped()?;
            if done(&bg) {
                return Ok(());
            }
            self.bg_cv.notify_all();
            self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
        }
    }

    pub(super) fn wait_for_compactions(&self) -> Result<()> {
        self.wait_background(|bg| {
            let idle = !bg.busy.iter().any(|&b| b) && bg.manual_waiting == 0;
            let v = self.tree.version();
            idle && compaction::pick(&v, &self.opts, &bg.busy, &mut bg.pointers.clone()).is_none()
        })
    }

    pub(super) fn compaction_loop(&self) {
        loop {
            let c = {
                let mut bg = self.bg.lock();
                loop {
                    if bg.shutdown {
                        return;
                    }
                    if bg.error.is_none() && bg.manual_waiting == 0 {
                        let v = self.tree.version();
                        let BgState { busy, pointers, .. } = &mut *bg;
                        if let Some(c) = compaction::pick(&v, &self.opts, busy, pointers) {
                            busy[c.level] = true;
                            busy[c.output_level] = true;
                            break c;
                        }
                    }
                    match self.opts.periodic_compaction_secs() {
                        // Files age without any write: look again now and then.
                        Some(_) => {
                            self.bg_cv.wait_for(&mut bg, super::ttl::PERIODIC_CHECK);
                        }
                        None => self.bg_cv.wait(&mut bg),
                    }
                }
            };
            let r = self.unless_panicked("compaction", || self.run_compaction(&c));
            let mut bg = self.bg.lock();
            bg.busy[c.level] = false;
            bg.busy[c.output_level] = false;
            drop(bg);
            if let Err(e) = r {
                self.set_bg_error(e);
            }
            let _bg = self.bg.lock();
            self.done_cv.notify_all();
            self.bg_cv.notify_all();
        }
    }

    pub(super) fn run_compaction(&self, c: &Compaction) -> Result<()> {
        let version = self.tree.version();
        let mut edit = VersionEdit::default();
        c.delete_inputs(&mut edit);
        if c.trivial_move {
            let f = &c.inputs[0].1[0];
            edit.added
                .push(f.placed_at(c.output_level, c.output_run.unwrap_or(f.number)));
        } else {
            let run = match c.output_run {
                Some(run) => run,
                None => self.versions.lock().new_file_number(),
            };
            let new_number = || self.versions.lock().new_file_number();
            let ctx = OutputCtx {
                fs: self.fs.as_ref(),
                dir: &self.dir,
                opts: &self.opts,
                level: c.output_level,
                run,
                split: true,
                smallest_snapshot: self.smallest_snapshot(),
                new_file_number: &new_number,
                filter: self.compaction_filter(),
            };
            let mut input = compaction::input_iter(c);
            // On error the inputs stay (no edit is logged) and write_outputs
            // has removed what it wrote.
            let range_bottom = compaction::range_bottom_check(c, &version);
            let range_dels = compaction::RangeDels {
                tombstones: compaction::input_range_dels(c)?,
                is_bottom: &range_bottom,
            };
            let outputs = compaction::write_outputs(
                &mut input,
                &ctx,
                &compaction::bottom_check(c, &version),
                range_dels,
            )?;
            for f in &outputs {
                bump(&self.counters.compaction_bytes_written, f.size);
            }
            compaction::sync_outputs(self.fs.as_ref(), &self.dir, &outputs)?;
            edit.added = outputs;
        }
        self.log_and_install(edit, None)?;
        bump(&self.counters.compactions, 1);
        Ok(())
    }

    pub(super) fn compact_range(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        let deepest = {
            let v = self.tree.version();
            (0..v.levels.len())
                .rev()
                .find(|&l| !v.levels[l].is_empty())
                .unwrap_or(0)
        };
        let last = deepest.max(1).min(self.opts.max_levels - 1);
        self.bg.lock().manual_waiting += 1;
        let result = (|| {
            for level in 0..=last {
                let c = {
                    let mut bg = self.bg.lock();
                    loop {
                        bg.stopped()?;
                        let out = (level + 1).min(self.opts.max_levels - 1);
                        if !bg.busy[level] && !bg.busy[out] {
                            break;
                        }
                        self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
                    }
                    let v = self.tree.version();
                    // The deepest level is merged in place only when it
                    // holds several runs (`manual` returns None otherwise).
                    let c = compaction::manual(&v, &self.opts, level, lo, hi);
                    let Some(c) = c else { continue };
                    bg.busy[c.level] = true;
                    bg.busy[c.output_level] = true;
                    c
                };
                let r = self.unless_panicked("compaction", || self.run_compaction(&c));
                let mut bg = self.bg.lock();
                bg.busy[c.level] = false;
                bg.busy[c.output_level] = false;
                self.done_cv.notify_all();
                drop(bg);
                if let Err(e @ Error::Poisoned(_)) = &r {
                    // The caller gets the error; a panic also stops writes,
                    // as it does in a background compaction.
                    self.set_bg_error(e.clone());
                }
                r?;
            }
            Ok(())
        })();
        let mut bg = self.bg.lock();
        bg.manual_waiting -= 1;
        self.bg_cv.notify_all();
        result
    }
}
