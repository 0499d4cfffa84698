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
            let idle = bg.running == 0 && bg.manual_waiting == 0;
            idle && self.trees().iter().all(|t| {
                let st = t.compaction.lock();
                let mut pointers = st.pointers.clone();
                compaction::pick(&t.version(), &t.opts(), &st.claims, &mut pointers).is_none()
            })
        })
    }

    /// The most urgent compaction of some keyspace, with its claim on the
    /// levels (caller holds the background lock). Keyspaces are tried in turn
    /// from a rotating start, so that one busy keyspace does not starve the
    /// others.
    fn pick_compaction(&self, bg: &mut BgState) -> Option<(Arc<Tree>, Compaction, ClaimId)> {
        let trees = self.trees();
        bg.rotate = bg.rotate.wrapping_add(1);
        let n = trees.len();
        for i in 0..n {
            let t = &trees[(bg.rotate + i) % n];
            let mut st = t.compaction.lock();
            let st = &mut *st;
            if let Some(c) = compaction::pick(&t.version(), &t.opts(), &st.claims, &mut st.pointers)
            {
                let claim = st.claims.take(&c);
                bg.running += 1;
                return Some((t.clone(), c, claim));
            }
        }
        None
    }

    /// Gives back a finished compaction's claim in `tree` (caller holds the
    /// background lock).
    fn release(&self, bg: &mut BgState, tree: &Tree, claim: ClaimId) {
        tree.compaction.lock().claims.release(claim);
        bg.running -= 1;
    }

    pub(super) fn compaction_loop(&self) {
        loop {
            let (tree, c, claim, started) = {
                let mut bg = self.bg.lock();
                loop {
                    if bg.shutdown {
                        return;
                    }
                    if bg.error.is_none() && bg.manual_waiting == 0 {
                        if let Some((tree, c, claim)) = self.pick_compaction(&mut bg) {
                            break (tree, c, claim, bg.resumes);
                        }
                    }
                    let periodic = self
                        .trees()
                        .iter()
                        .any(|t| t.opts().periodic_compaction_secs().is_some());
                    if periodic {
                        // Files age without any write: look again now and then.
                        self.bg_cv.wait_for(&mut bg, super::ttl::PERIODIC_CHECK);
                    } else {
                        self.bg_cv.wait(&mut bg);
                    }
                }
            };
            let r = self.unless_panicked("compaction", || self.run_compaction(&tree, &c));
            let mut bg = self.bg.lock();
            self.release(&mut bg, &tree, claim);
            drop(bg);
            if let Err(e) = r {
                self.set_job_error(e, started);
            }
            let _bg = self.bg.lock();
            self.done_cv.notify_all();
            self.bg_cv.notify_all();
        }
    }

    pub(super) fn run_compaction(&self, tree: &Tree, c: &Compaction) -> Result<()> {
        let version = tree.version();
        let opts = tree.opts();
        let mut edit = VersionEdit {
            keyspace: tree.id,
            ..VersionEdit::default()
        };
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
            let inputs: Vec<(u64, u64)> = c
                .inputs
                .iter()
                .flat_map(|(_, files)| files.iter().map(|f| (f.number, f.entries)))
                .collect();
            // About one output file's keys: the inputs' mean.
            let entries = inputs.iter().map(|&(_, e)| e).sum::<u64>() / inputs.len().max(1) as u64;
            let filter_family = self.tables.filter_budget().family_for(
                &opts.filter,
                c.output_level,
                entries,
                &inputs,
            );
            let ctx = OutputCtx {
                fs: self.fs.as_ref(),
                dir: &self.dir,
                opts: &opts,
                level: c.output_level,
                run,
                split: true,
                smallest_snapshot: self.smallest_snapshot(),
                new_file_number: &new_number,
                filter: self.compaction_filter(&opts),
                keyspace: (tree.id, &tree.name),
                filter_family,
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
        self.log_and_install(tree, edit)?;
        bump(&self.counters.compactions, 1);
        Ok(())
    }

    pub(super) fn compact_range(
        &self,
        tree: &Tree,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
    ) -> Result<()> {
        self.flush()?;
        let opts = tree.opts();
        let deepest = {
            let v = tree.version();
            (0..v.levels.len())
                .rev()
                .find(|&l| !v.levels[l].is_empty())
                .unwrap_or(0)
        };
        let last = deepest.max(1).min(opts.max_levels - 1);
        self.bg.lock().manual_waiting += 1;
        let result = (|| {
            for level in 0..=last {
                let (c, claim) = {
                    let mut bg = self.bg.lock();
                    loop {
                        bg.stopped()?;
                        let out = (level + 1).min(opts.max_levels - 1);
                        let st = tree.compaction.lock();
                        if st.claims.level_free(level) && st.claims.level_free(out) {
                            break;
                        }
                        drop(st);
                        self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
                    }
                    let v = tree.version();
                    // The deepest level is rewritten in place only where it
                    // holds several runs, range tombstones or entries to be
                    // filtered (`manual` returns None otherwise).
                    let c = compaction::manual(&v, &opts, level, last, lo, hi);
                    let Some(c) = c else { continue };
                    let claim = tree.compaction.lock().claims.take(&c);
                    bg.running += 1;
                    (c, claim)
                };
                let r = self.unless_panicked("compaction", || self.run_compaction(tree, &c));
                let mut bg = self.bg.lock();
                self.release(&mut bg, tree, claim);
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
