//! A cursor over a sorted run: the concatenation of files with disjoint ranges.

use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key;
use crate::sst::reader::{ReadCtx, TableIter};
use crate::version::FileMeta;

/// Iterates over `files` (sorted, disjoint) opening one table at a time.
pub struct RunIter {
    files: Vec<Arc<FileMeta>>,
    index: usize,
    current: Option<TableIter>,
    ctx: ReadCtx,
}

impl RunIter {
    /// A cursor over `files`.
    pub fn new(files: Vec<Arc<FileMeta>>, ctx: ReadCtx) -> Self {
        RunIter {
            files,
            index: 0,
            current: None,
            ctx,
        }
    }

    fn open(&mut self, i: usize) -> Result<()> {
        self.index = i;
        self.current = match self.files.get(i) {
            Some(f) => Some(f.tables().get(f.number)?.iter(self.ctx)),
            None => None,
        };
        Ok(())
    }

    /// Moves to following files while the current one is exhausted.
    fn settle(&mut self) -> Result<()> {
        while let Some(c) = &self.current {
            if c.valid() {
                return Ok(());
            }
            self.open(self.index + 1)?;
            if let Some(c) = &mut self.current {
                c.seek_to_first()?;
            }
        }
        Ok(())
    }
}

impl InternalIterator for RunIter {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.open(0)?;
        if let Some(c) = &mut self.current {
            c.seek_to_first()?;
        }
        self.settle()
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let i = self
            .files
            .partition_point(|f| key::compare(&f.largest, target).is_lt());
        self.open(i)?;
        if let Some(c) = &mut self.current {
            c.seek(target)?;
        }
        self.settle()
    }
    fn next(&mut self) -> Result<()> {
        if let Some(c) = &mut self.current {
            c.next()?;
        }
        self.settle()
    }
    fn key(&self) -> &[u8] {
        self.current.as_ref().expect("valid iterator").key()
    }
    fn value(&self) -> &[u8] {
        self.current.as_ref().expect("valid iterator").value()
    }
}
