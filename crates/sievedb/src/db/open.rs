//! Opening a database: recovery from the MANIFEST and the WALs.

use super::*;

/// The error every write, flush and compaction of a read-only handle returns.
pub(super) fn read_only_error(what: &str) -> Error {
    Error::Unsupported(format!(
        "{what}: the database was opened read-only (Db::open_read_only)"
    ))
}

/// A read-only handle's stand-in for the `LOCK` file: nothing is locked.
struct NoLock;

impl FileLock for NoLock {}

/// A read-only handle's stand-in for the WAL: nothing can be written.
struct NoWal;

impl WritableFile for NoWal {
    fn append(&mut self, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "the database was opened read-only",
        ))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl DbInner {
    /// Opens the database in `dir`: recovers the MANIFEST and replays the
    /// WALs. Read-write, the replayed writes are flushed to level 0 and a new
    /// WAL is started; `read_only`, nothing in the directory is created,
    /// written, renamed or removed and the replayed writes stay in memtables.
    pub(super) fn open(
        dir: PathBuf,
        opts: Options,
        fs: Arc<dyn FileSystem>,
        read_only: bool,
    ) -> Result<DbInner> {
        if read_only && opts.error_if_exists {
            return Err(Error::InvalidArgument(
                "error_if_exists cannot be combined with Db::open_read_only".into(),
            ));
        }
        if !fs.exists(&dir) {
            if read_only {
                return Err(Error::InvalidArgument(format!(
                    "database {} does not exist (a read-only open never creates one)",
                    dir.display()
                )));
            }
            if !opts.create_if_missing {
                return Err(Error::InvalidArgument(format!(
                    "database {} does not exist (create_if_missing is off)",
                    dir.display()
                )));
            }
            crate::io::create_dir_all_durable(fs.as_ref(), &dir)?;
        } else if !fs.is_dir(&dir) {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let lock: Box<dyn FileLock> = if read_only {
            Box::new(NoLock)
        } else {
            crate::io::lock_dir(fs.as_ref(), &dir)?
        };
        // Fail at open, not at the first read, where O_DIRECT is refused. A
        // read-only open probes CURRENT (it has no LOCK file of its own).
        let probe = if read_only {
            filename::current(&dir)
        } else {
            filename::lock(&dir)
        };
        if opts.use_direct_reads && fs.exists(&probe) {
            fs.open_random(&probe, true).map_err(|e| {
                if crate::io::os_error(&e) == Some(libc::EINVAL) {
                    Error::Unsupported(format!(
                        "the file system of {} refuses O_DIRECT (use_direct_reads)",
                        dir.display()
                    ))
                } else {
                    Error::Io(e)
                }
            })?;
        }
        let counters = Arc::new(Counters::new(opts.max_levels));
        let blocks = (opts.block_cache_capacity > 0)
            .then(|| Arc::new(BlockCache::new(opts.block_cache_capacity)));
        let tables = Arc::new(TableCache::new(
            fs.clone(),
            dir.clone(),
            &opts,
            blocks,
            counters.clone(),
        ));
        let mut versions = VersionSet::new(&dir, fs.clone(), tables.clone(), opts.max_levels);
        versions.default_creation_time = opts.file_creation_time();
        let names = fs.list_dir(&dir)?;
        if fs.exists(&filename::current(&dir)) {
            if opts.error_if_exists {
                return Err(Error::InvalidArgument(format!(
                    "database {} already exists",
                    dir.display()
                )));
            }
            // Before the files register, so that they start as hot as they were.
            tables.filter_budget().load_hotness(fs.as_ref(), &dir)?;
            versions.recover()?;
            versions.check_live_files(&names, !opts.skip_checking_sst_file_sizes_on_db_open)?;
            super::ttl::check_marker(&dir, versions.ttl_stamped, &opts)?;
        } else if names.iter().any(|n| match filename::parse(n) {
            // Nothing is acknowledged before CURRENT exists, so a MANIFEST or an
            // empty WAL without CURRENT is left over from an interrupted creation
            // (deleted below as obsolete); an SST or a non-empty WAL is data.
            Some(filename::FileKind::Sst(_)) => true,
            Some(filename::FileKind::Wal(_)) => {
                crate::wal::log_size(fs.as_ref(), &dir.join(n)).map_or(true, |s| s > 0)
            }
            _ => false,
        }) {
            return Err(Error::corruption(
                filename::current(&dir),
                "CURRENT is missing but the directory holds database files",
            ));
        } else if read_only {
            return Err(Error::InvalidArgument(format!(
                "{} holds no sievedb database (no CURRENT file)",
                dir.display()
            )));
        }
        // Never reuse a file number that exists on disk.
        for n in &names {
            if let Some(
                filename::FileKind::Wal(x)
                | filename::FileKind::Sst(x)
                | filename::FileKind::Manifest(x),
            ) = filename::parse(n)
            {
                versions.next_file_number = versions.next_file_number.max(x + 1);
            }
        }
        let mut wals: Vec<u64> = names
            .iter()
            .filter_map(|n| match filename::parse(n) {
                Some(filename::FileKind::Wal(x)) if x >= versions.log_number => Some(x),
                _ => None,
            })
            .collect();
        wals.sort_unstable();

        let mut edits: BTreeMap<u32, VersionEdit> = BTreeMap::new();
        let mut recovered: BTreeMap<u32, Vec<Arc<Memtable>>> = BTreeMap::new();
        let manifest_seq = versions.last_sequence;
        // Entries of a dropped keyspace are skipped; an id never created is damage.
        let live_ids: Vec<u32> = versions.keyspaces().keys().copied().collect();
        let next_id = versions.next_keyspace_id;
        let live = |id: u32| -> std::result::Result<bool, String> {
            match id {
                0 => Ok(true),
                id if live_ids.contains(&id) => Ok(true),
                id if id < next_id => Ok(false),
                id => Err(format!(
                    "an entry names keyspace {id}, which was never created"
                )),
            }
        };
        let start = super::replay::Start {
            last_sequence: manifest_seq,
            torn_edit: versions.manifest_torn.is_some_and(|(_, _, data)| data),
            manifest: filename::manifest(&dir, versions.manifest_number()),
        };
        let mut report =
            super::replay::replay_wals(fs.as_ref(), &dir, &wals, &opts, start, live, |mems| {
                if read_only {
                    for (id, mem) in mems {
                        recovered.entry(id).or_default().push(mem);
                    }
                    Ok(())
                } else {
                    recovery_flush(&mut versions, &fs, &dir, &opts, mems, &mut edits)
                }
            })?;
        if let Some((offset, bytes, true)) = versions.manifest_torn {
            report.manifest_bytes_dropped = bytes;
            let outputs: Vec<u64> = edits
                .values()
                .flat_map(|e| &e.added)
                .map(|f| f.number)
                .collect();
            let checked =
                check_dropped_edit(fs.as_ref(), &dir, &names, &versions, &report, &counters);
            if let Err(e) = checked {
                compaction::remove_files(fs.as_ref(), &dir, outputs);
                return Err(Error::corruption(
                    filename::manifest(&dir, versions.manifest_number()),
                    format!(
                        "its last edit (offset {offset}, {bytes} bytes) is damaged and had been                          relied on: {e}; run Db::repair"
                    ),
                ));
            }
        }
        let last_seq = report.last_sequence;

        let (log, wal_number) = if read_only {
            let log = LogWriter::new(Box::new(NoWal), dir.join("(no WAL: read-only)"));
            (log, 0)
        } else {
            // Evidence is kept of anything but a torn tail without an intact
            // record in it (only intact records hold entries the report counts).
            let keep =
                !report.dropped.as_ref().is_none_or(|d| d.torn_tail) || report.entries_dropped > 0;
            if let Some(d) = report.dropped.as_mut().filter(|_| keep) {
                d.kept_in = Some(super::replay::keep_lost(fs.as_ref(), &dir, d)?);
            }
            let wal_number = versions.new_file_number();
            let wal_path = filename::wal(&dir, wal_number);
            let log = LogWriter::new(create_wal(fs.as_ref(), &opts, &wal_path)?, wal_path);
            fs.sync_dir(&dir)?;
            let mut edits: Vec<VersionEdit> = edits.into_values().collect();
            if edits.first().is_none_or(|e| e.keyspace != 0) {
                edits.insert(0, VersionEdit::default());
            }
            edits[0].log_number = Some(wal_number);
            edits[0].last_sequence = Some(last_seq);
            // Records the TTL-ness of a new database (checked above for an
            // existing one, so this repeats what it holds).
            edits[0].ttl_stamped = opts.ttl.is_some();
            versions.log_and_apply_all(edits)?;
            (log, wal_number)
        };
        let opts_arc = Arc::new(opts.clone());
        let mut trees = BTreeMap::new();
        for (&id, v) in versions.versions() {
            let (name, tree_opts) = match versions.keyspaces().get(&id) {
                None => (crate::keyspace::DEFAULT, opts_arc.clone()),
                Some(k) => (k.name.as_str(), Arc::new(unconfigured(&opts))),
            };
            let mem = Arc::new(new_memtable(&tree_opts, wal_number));
            let imm = recovered.remove(&id).unwrap_or_default();
            // Every write recovered so far is in a file (or in `imm`).
            let tree = Tree::new(id, name, tree_opts, mem, imm, v.clone(), last_seq);
            trees.insert(id, Arc::new(tree));
        }
        let inner = DbInner {
            tree: trees[&0].clone(),
            multi: AtomicBool::new(trees.len() > 1),
            trees: RwLock::new(trees),
            flush_lock: Mutex::new(()),
            wal: Mutex::new(WalState {
                log,
                throttle: super::stall::Throttle::default(),
            }),
            wal_files: Mutex::new(if read_only {
                VecDeque::new()
            } else {
                VecDeque::from([wal_number])
            }),
            queue: Mutex::new(VecDeque::new()),
            queue_cv: Condvar::new(),
            last_seq: AtomicU64::new(last_seq),
            bg_failed: AtomicBool::new(false),
            snapshots: Mutex::new(BTreeMap::new()),
            bg: Mutex::new(BgState {
                shutdown: false,
                error: None,
                resuming: false,
                resume_attempts: 0,
                resumes: 0,
                running: 0,
                rotate: 0,
                manual_waiting: 0,
            }),
            bg_cv: Condvar::new(),
            done_cv: Condvar::new(),
            versions: Mutex::new(versions),
            dir,
            opts,
            fs,
            counters,
            tables,
            read_only,
            recovery: report,
            locks: crate::txn::locks::LockManager::default(),
            handles: super::handles::HandleCounts::default(),
            token: super::handles::new_token(),
            _lock: lock,
        };
        if !read_only {
            inner.delete_obsolete_files()?;
        }
        Ok(inner)
    }

    /// Removes WALs, SSTs and MANIFESTs the live version no longer needs.
    pub(super) fn delete_obsolete_files(&self) -> Result<()> {
        let (live, log_number, manifest) = {
            let vs = self.versions.lock();
            let live: std::collections::HashSet<u64> = vs.live_files().map(|f| f.number).collect();
            (live, vs.log_number, vs.manifest_number())
        };
        for name in self.fs.list_dir(&self.dir)? {
            let remove = match filename::parse(&name) {
                Some(filename::FileKind::Wal(n)) => n < log_number,
                Some(filename::FileKind::Sst(n)) => !live.contains(&n),
                Some(filename::FileKind::Manifest(n)) => n != manifest,
                Some(filename::FileKind::Temp) => true,
                None => false,
            };
            if remove {
                let _ = self.fs.remove_file(&self.dir.join(&name));
            }
        }
        Ok(())
    }
}

/// After the MANIFEST's damaged last edit was dropped (as the torn write of
/// an edit never synced), checks that nothing relied on it: had it been
/// synced, the files it retired may be gone (a missing live table fails the
/// open before this), and the SSTs it added would hold writes whose WAL was
/// deleted. So an SST no version names (an orphan) must hold no write newer
/// than every write recovery found. Reads every orphan in full: this runs
/// only after a power loss while an edit was being logged.
fn check_dropped_edit(
    fs: &dyn FileSystem,
    dir: &Path,
    names: &[String],
    versions: &VersionSet,
    report: &RecoveryReport,
    counters: &Arc<Counters>,
) -> Result<()> {
    let live: std::collections::HashSet<u64> = versions.live_files().map(|f| f.number).collect();
    for n in names {
        let Some(filename::FileKind::Sst(number)) = filename::parse(n) else {
            continue;
        };
        if live.contains(&number) {
            continue;
        }
        let path = dir.join(n);
        let table = crate::sst::reader::TableReader::open(
            fs,
            &path,
            number,
            false,
            true,
            None,
            counters.clone(),
        )
        .map(Arc::new);
        // An orphan that does not read is a partial output, never added.
        let Ok((_, max_seq)) = table.and_then(|t| t.scan_sequences()) else {
            continue;
        };
        if max_seq > report.last_sequence {
            return Err(Error::corruption(
                &path,
                format!(
                    "no version names it, yet it holds sequence {max_seq}, past the {} recovery                      found",
                    report.last_sequence
                ),
            ));
        }
    }
    Ok(())
}

/// Bytes of memtable per key its filter is sized for (a filter sized for
/// small entries wastes a little memory on large ones; the reverse would
/// raise its false-positive rate).
const MEMTABLE_BYTES_PER_FILTER_KEY: usize = 64;

/// A fresh active memtable for WAL `wal_number`, with a filter when the
/// options ask for one.
/// Creates a WAL: preallocated and mapped ([`FileSystem::create_log`]),
/// except under [`WalRecovery::AbsoluteConsistency`], which fails an open on
/// any zero tail and so needs a log that never runs ahead of its data.
pub(super) fn create_wal(
    fs: &dyn FileSystem,
    opts: &Options,
    path: &Path,
) -> std::io::Result<Box<dyn crate::io::WritableFile>> {
    if opts.wal_recovery == WalRecovery::AbsoluteConsistency {
        fs.create(path)
    } else {
        fs.create_log(path)
    }
}

pub(super) fn new_memtable(opts: &Options, wal_number: u64) -> Memtable {
    let filter = opts.filter.memtable_filter.then(|| {
        let keys = (opts.write_buffer_size / MEMTABLE_BYTES_PER_FILTER_KEY).max(1024);
        MemtableFilter::new(keys, &opts.filter)
    });
    let prefix = opts.prefix_extractor.as_ref().map(|x| {
        let keys = (opts.write_buffer_size / MEMTABLE_BYTES_PER_FILTER_KEY).max(1024);
        crate::filter::prefix::MemtablePrefixFilter::new(x.clone(), keys, &opts.filter)
    });
    Memtable::with_filter(wal_number, filter).with_prefix_filter(prefix)
}

/// The options a keyspace recovered at open runs on until its own are given
/// (`Db::keyspace`/`keyspace_with`): the database's, without anything that
/// changes data (merge operator, compaction filter, TTL), which may not be
/// the keyspace's: operands, values and stamps are kept as they are.
pub(super) fn unconfigured(opts: &Options) -> Options {
    Options {
        merge_operator: None,
        compaction_filter: None,
        ttl: None,
        ..opts.clone()
    }
}

/// Flushes the memtables rebuilt from the WAL during recovery (one per
/// keyspace) into L0 files, adding them to each keyspace's edit. Another
/// keyspace than the default one is flushed under [`unconfigured`] options
/// (its own are given later).
fn recovery_flush(
    versions: &mut VersionSet,
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    mems: BTreeMap<u32, Arc<Memtable>>,
    edits: &mut BTreeMap<u32, VersionEdit>,
) -> Result<()> {
    let next = AtomicU64::new(versions.next_file_number);
    let new_number = || next.fetch_add(1, Ordering::Relaxed);
    let names: BTreeMap<u32, String> = versions
        .keyspaces()
        .iter()
        .map(|(id, k)| (*id, k.name.clone()))
        .collect();
    let neutral = unconfigured(opts);
    let mut written = Vec::new();
    let result = (|| {
        for (id, mem) in &mems {
            let ctx = OutputCtx {
                fs: fs.as_ref(),
                dir,
                opts: if *id == 0 { opts } else { &neutral },
                level: 0,
                run: 0,
                split: false,
                smallest_snapshot: 0,
                new_file_number: &new_number,
                filter: None,
                keyspace: (*id, names.get(id).map_or("", String::as_str)),
                // The budget knows no file yet: the options' own family.
                filter_family: None,
            };
            let mut it = mem.iter();
            let range_dels = compaction::RangeDels {
                tombstones: mem.range_dels(),
                is_bottom: &|_| false,
            };
            let edit = edits.entry(*id).or_insert_with(|| VersionEdit {
                keyspace: *id,
                ..VersionEdit::default()
            });
            for mut f in compaction::write_outputs(&mut it, &ctx, &|_| false, range_dels)? {
                f.run = f.number;
                written.push(f.number);
                edit.added.push(f);
            }
        }
        fs.sync_dir(dir).map_err(Error::from)
    })();
    versions.next_file_number = next.into_inner();
    if result.is_err() {
        // Open fails: no MANIFEST references the files of this recovery yet.
        compaction::remove_files(fs.as_ref(), dir, written);
    }
    result
}
