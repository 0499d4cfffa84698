//! Opening a database: recovery from the MANIFEST and the WALs.

use super::*;

impl DbInner {
    pub(super) fn open(dir: PathBuf, opts: Options, fs: Arc<dyn FileSystem>) -> Result<DbInner> {
        if !fs.exists(&dir) {
            if !opts.create_if_missing {
                return Err(Error::InvalidArgument(format!(
                    "database {} does not exist (create_if_missing is off)",
                    dir.display()
                )));
            }
            fs.create_dir_all(&dir)?;
        } else if !dir.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let lock = crate::io::lock_dir(fs.as_ref(), &dir)?;
        if opts.use_direct_reads {
            // Fail at open, not at the first read, where O_DIRECT is refused.
            fs.open_random(&filename::lock(&dir), true).map_err(|e| {
                if e.raw_os_error() == Some(libc::EINVAL) {
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
        let names = fs.list_dir(&dir)?;
        if fs.exists(&filename::current(&dir)) {
            if opts.error_if_exists {
                return Err(Error::InvalidArgument(format!(
                    "database {} already exists",
                    dir.display()
                )));
            }
            versions.recover()?;
        } else if names.iter().any(|n| match filename::parse(n) {
            // Nothing is acknowledged before CURRENT exists, so a MANIFEST or an
            // empty WAL without CURRENT is left over from an interrupted creation
            // (deleted below as obsolete); an SST or a non-empty WAL is data.
            Some(filename::FileKind::Sst(_)) => true,
            Some(filename::FileKind::Wal(_)) => {
                std::fs::metadata(dir.join(n)).map_or(true, |m| m.len() > 0)
            }
            _ => false,
        }) {
            return Err(Error::corruption(
                filename::current(&dir),
                "CURRENT is missing but the directory holds database files",
            ));
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

        let mut edit = VersionEdit::default();
        let mut last_seq = versions.last_sequence;
        let mut mem = Arc::new(Memtable::new(0));
        for &w in &wals {
            let path = filename::wal(&dir, w);
            let data = fs.read_all(&path)?;
            for rec in read_records(&data, &path, crate::wal::Tail::Lenient)? {
                let (seq, entries) = batch::decode(rec).map_err(|d| Error::corruption(&path, d))?;
                for (i, e) in entries.iter().enumerate() {
                    mem.insert(seq + i as u64, e.kind, e.key, e.value);
                }
                last_seq =
                    last_seq.max(seq + entries.len() as u64 - u64::from(!entries.is_empty()));
                if mem.approximate_size() >= opts.write_buffer_size {
                    recovery_flush(&mut versions, &fs, &dir, &opts, &mem, &mut edit)?;
                    mem = Arc::new(Memtable::new(0));
                }
            }
        }
        if !mem.is_empty() {
            recovery_flush(&mut versions, &fs, &dir, &opts, &mem, &mut edit)?;
        }
        let wal_number = versions.new_file_number();
        let wal_path = filename::wal(&dir, wal_number);
        let log = LogWriter::new(fs.create(&wal_path)?, wal_path);
        fs.sync_dir(&dir)?;
        edit.log_number = Some(wal_number);
        edit.last_sequence = Some(last_seq);
        let current = versions.log_and_apply(edit)?;
        let l0_runs = current.levels[0].len();

        let mem = Arc::new(new_memtable(&opts, wal_number));
        let imm = Arc::new(Vec::new());
        let inner = DbInner {
            view: ArcSwap::from_pointee(View {
                mem: mem.clone(),
                imm: imm.clone(),
                version: current.clone(),
            }),
            view_lock: Mutex::new(()),
            views_published: AtomicU64::new(0),
            mem: RwLock::new(MemState { mem, imm }),
            current: RwLock::new(current),
            wal: Mutex::new(WalState { log }),
            queue: Mutex::new(VecDeque::new()),
            queue_cv: Condvar::new(),
            last_seq: AtomicU64::new(last_seq),
            bg_failed: AtomicBool::new(false),
            l0_runs: AtomicUsize::new(l0_runs),
            snapshots: Mutex::new(BTreeMap::new()),
            bg: Mutex::new(BgState {
                shutdown: false,
                error: None,
                busy: vec![false; opts.max_levels],
                pointers: Pointers::default(),
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
            _lock: lock,
        };
        inner.delete_obsolete_files()?;
        Ok(inner)
    }

    /// Removes WALs, SSTs and MANIFESTs the live version no longer needs.
    pub(super) fn delete_obsolete_files(&self) -> Result<()> {
        let (live, log_number, manifest) = {
            let vs = self.versions.lock();
            let live: std::collections::HashSet<u64> =
                vs.current().files().map(|(_, f)| f.number).collect();
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

/// Bytes of memtable per key its filter is sized for (a filter sized for
/// small entries wastes a little memory on large ones; the reverse would
/// raise its false-positive rate).
const MEMTABLE_BYTES_PER_FILTER_KEY: usize = 64;

/// A fresh active memtable for WAL `wal_number`, with a filter when the
/// options ask for one.
pub(super) fn new_memtable(opts: &Options, wal_number: u64) -> Memtable {
    let filter = opts.filter.memtable_filter.then(|| {
        let keys = (opts.write_buffer_size / MEMTABLE_BYTES_PER_FILTER_KEY).max(1024);
        MemtableFilter::new(keys, &opts.filter)
    });
    Memtable::with_filter(wal_number, filter)
}

/// Flushes a memtable rebuilt from the WAL during recovery into an L0 file.
fn recovery_flush(
    versions: &mut VersionSet,
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    mem: &Arc<Memtable>,
    edit: &mut VersionEdit,
) -> Result<()> {
    let next = AtomicU64::new(versions.next_file_number);
    let new_number = || next.fetch_add(1, Ordering::Relaxed);
    let ctx = OutputCtx {
        fs: fs.as_ref(),
        dir,
        opts,
        level: 0,
        run: 0,
        split: false,
        smallest_snapshot: 0,
        new_file_number: &new_number,
    };
    let mut it = mem.iter();
    let result = (|| {
        for mut f in compaction::write_outputs(&mut it, &ctx, &|_| false)? {
            f.run = f.number;
            edit.added.push(f);
        }
        fs.sync_dir(dir).map_err(Error::from)
    })();
    versions.next_file_number = next.into_inner();
    if result.is_err() {
        // Open fails: no MANIFEST references the files of this recovery yet.
        let numbers = edit.added.drain(..).map(|f| f.number).collect();
        compaction::remove_files(fs.as_ref(), dir, numbers);
    }
    result
}
