//! The check an open makes of the live files right after the MANIFEST is
//! recovered ([`VersionSet::check_live_files`]): every SST the live version
//! of any keyspace names must be in the directory with the size the MANIFEST
//! recorded for it (the format's invariant, `docs/format.md`, "Live files at
//! open"). Without it, a deleted or cut table would open and fail only the
//! reads that touch it, and a compaction taking it as input would stop
//! writes; the open is the moment to say so, and to point to repair.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::io::filename;

use super::{FileMeta, VersionSet};

/// One live file that failed the check.
struct Bad<'a> {
    /// The keyspace's name.
    keyspace: &'a str,
    level: usize,
    file: &'a FileMeta,
    /// Its size on disk (`None`: missing).
    actual: Option<u64>,
}

impl VersionSet {
    /// Checks that every live SST of every keyspace exists (`names` is the
    /// directory listing the open took) and, when `check_sizes`, that its
    /// size is the one the MANIFEST recorded (one `file_size` per live
    /// file). The failing file of the lowest number is the error's
    /// [`Error::Corruption`] file; the message says what is wrong with it
    /// (missing, or its expected and actual sizes), its keyspace and level,
    /// how many other live files failed too, and what to do: repair the
    /// database, or (a size only) skip the size check to read what is left.
    pub fn check_live_files(&self, names: &[String], check_sizes: bool) -> Result<()> {
        let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
        let mut bad: Vec<Bad<'_>> = Vec::new();
        // (keyspace, level, file) of every live file the listing holds, whose
        // size is to be checked.
        let mut sized: Vec<(&str, usize, &FileMeta)> = Vec::new();
        for (&id, v) in self.versions() {
            let keyspace = match self.keyspaces().get(&id) {
                Some(k) => k.name.as_str(),
                None => crate::keyspace::DEFAULT,
            };
            for (level, f) in v.files() {
                if !listed.contains(filename::sst_name(f.number).as_str()) {
                    bad.push(Bad {
                        keyspace,
                        level,
                        file: f,
                        actual: None,
                    });
                } else if check_sizes {
                    sized.push((keyspace, level, f));
                }
            }
        }
        for (i, size) in self.sizes(&sized)?.into_iter().enumerate() {
            let (keyspace, level, file) = sized[i];
            if size != Some(file.size) {
                bad.push(Bad {
                    keyspace,
                    level,
                    file,
                    actual: size,
                });
            }
        }
        // The lowest file number first, whatever its keyspace and level.
        bad.sort_by_key(|b| b.file.number);
        let Some(first) = bad.first() else {
            return Ok(());
        };
        let what = match first.actual {
            None => "is missing".to_string(),
            Some(actual) => format!(
                "is {actual} bytes but the MANIFEST records {} ({})",
                first.file.size,
                if actual < first.file.size {
                    "cut short"
                } else {
                    "longer"
                }
            ),
        };
        let others = match bad.len() - 1 {
            0 => String::new(),
            n => {
                let missing = bad[1..].iter().filter(|b| b.actual.is_none()).count();
                format!(
                    "; {n} more live SST(s) failed the check too ({missing} missing, {} of \
                     the wrong size)",
                    n - missing
                )
            }
        };
        let remedy = if bad.iter().any(|b| b.actual.is_none()) {
            "Db::repair (CLI: sievedb repair --db DIR) rebuilds the database from the files \
             that are there, and reports what was lost"
        } else {
            "Db::repair (CLI: sievedb repair --db DIR) rebuilds the database from the files \
             that are there, and reports what was lost; \
             Options::skip_checking_sst_file_sizes_on_db_open opens it as it is (reads that \
             touch the file then fail)"
        };
        Err(Error::corruption(
            filename::sst(&self.dir, first.file.number),
            format!(
                "live SST {} (keyspace {:?}, level {}, {} entries) {what}{others}. {remedy}",
                first.file.number, first.keyspace, first.level, first.file.entries
            ),
        ))
    }

    /// The size of each of `files` (`None`: deleted since the listing), from
    /// up to [`STAT_THREADS`] threads when there are many: a stat is a system
    /// call of its own (BENCHMARKS.md, "Durability: the write path, the open, repair").
    fn sizes(&self, files: &[(&str, usize, &FileMeta)]) -> Result<Vec<Option<u64>>> {
        // Not `self`: the version set's MANIFEST writer is not `Sync`.
        let (fs, dir) = (self.fs.as_ref(), self.dir.as_path());
        let sizes_of = |part: &[(&str, usize, &FileMeta)]| -> Result<Vec<Option<u64>>> {
            let names: Vec<String> = part
                .iter()
                .map(|(_, _, f)| filename::sst_name(f.number))
                .collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            fs.file_sizes(dir, &refs)
                .into_iter()
                .map(|r| match r {
                    Ok(size) => Ok(Some(size)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(Error::Io(e)),
                })
                .collect()
        };
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(STAT_THREADS)
            .min(files.len() / STATS_PER_THREAD)
            .max(1);
        if threads == 1 {
            return sizes_of(files);
        }
        let chunk = files.len().div_ceil(threads);
        std::thread::scope(|s| {
            let parts: Vec<_> = files
                .chunks(chunk)
                .map(|part| s.spawn(move || sizes_of(part)))
                .collect();
            let mut out = Vec::with_capacity(files.len());
            for p in parts {
                out.extend(p.join().map_err(|_| {
                    Error::Io(std::io::Error::other(
                        "a thread checking SST sizes panicked",
                    ))
                })??);
            }
            Ok(out)
        })
    }
}

/// Threads an open checks live files' sizes from, at most.
const STAT_THREADS: usize = 4;

/// Files a thread checks, at least (fewer run on one thread).
const STATS_PER_THREAD: usize = 1024;
