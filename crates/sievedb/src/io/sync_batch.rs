//! [`SyncBatch`]: files written out whose fsync is deferred, so that the
//! device writes one while the engine fills the next.

use std::io;

use super::WritableFile;

/// Finished files not yet fsynced, at most [`SyncBatch::LIMIT`].
///
/// A writer that produces many files in a row (a merge's outputs, a bulk
/// load's tables) calls [`WritableFile::start_writeback`] when it finishes
/// one and [`push`](Self::push)es it here instead of fsyncing it: the device
/// writes it while the next file is filled, and its fsync, when it comes,
/// has little left to wait for. The files are fsynced `LIMIT` at a time, and
/// the writer calls [`sync_all`](Self::sync_all) before anything durable
/// refers to them. Dropping the batch closes its files without syncing them.
#[derive(Default)]
pub(crate) struct SyncBatch {
    files: Vec<Box<dyn WritableFile>>,
}

impl SyncBatch {
    /// Files held before they are fsynced together: bounds the extra file
    /// descriptors a writer keeps open.
    pub(crate) const LIMIT: usize = 16;

    /// Holds `file`; fsyncs the batch once it holds [`Self::LIMIT`] files.
    pub(crate) fn push(&mut self, file: Box<dyn WritableFile>) -> io::Result<()> {
        self.files.push(file);
        if self.files.len() >= Self::LIMIT {
            self.sync_all()?;
        }
        Ok(())
    }

    /// fsyncs every held file, oldest first (its writeback started first),
    /// and closes them.
    pub(crate) fn sync_all(&mut self) -> io::Result<()> {
        for mut f in self.files.drain(..) {
            f.sync()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts its syncs in a shared counter.
    struct Counted(Arc<AtomicUsize>);

    impl WritableFile for Counted {
        fn append(&mut self, _: &[u8]) -> io::Result<()> {
            Ok(())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> io::Result<()> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    #[test]
    fn syncs_a_full_batch_and_the_rest_on_demand() {
        let synced = Arc::new(AtomicUsize::new(0));
        let mut b = SyncBatch::default();
        for i in 1..=SyncBatch::LIMIT + 3 {
            b.push(Box::new(Counted(synced.clone()))).unwrap();
            let want = if i < SyncBatch::LIMIT {
                0
            } else {
                SyncBatch::LIMIT
            };
            assert_eq!(synced.load(Ordering::SeqCst), want, "after {i} files");
        }
        b.sync_all().unwrap();
        assert_eq!(synced.load(Ordering::SeqCst), SyncBatch::LIMIT + 3);
        b.sync_all().unwrap();
        assert_eq!(synced.load(Ordering::SeqCst), SyncBatch::LIMIT + 3);
    }
}
