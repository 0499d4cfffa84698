//! [`NamedFs`]: a [`FileSystem`] wrapper whose errors, and those of the files
//! it opens, name the path involved.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{with_path, FileLock, FileMap, FileSystem, RandomAccessFile, WritableFile};

/// Wraps any [`FileSystem`] so that every error it returns, including those of
/// the files it opens, names the path involved. [`crate::Db`] reads and writes
/// through one of these whatever file system it is given.
pub(crate) struct NamedFs(pub(crate) Arc<dyn FileSystem>);

struct NamedWritable {
    file: Box<dyn WritableFile>,
    path: PathBuf,
}

impl NamedWritable {
    /// `created` (a file just created at `path`), naming `path` in its errors.
    fn wrap(
        created: io::Result<Box<dyn WritableFile>>,
        path: &Path,
    ) -> io::Result<Box<dyn WritableFile>> {
        let file = created.map_err(|e| with_path(e, path))?;
        Ok(Box::new(NamedWritable {
            file,
            path: path.to_path_buf(),
        }))
    }
}

impl WritableFile for NamedWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.file.append(data).map_err(|e| with_path(e, &self.path))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush().map_err(|e| with_path(e, &self.path))
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync().map_err(|e| with_path(e, &self.path))
    }
    fn start_writeback(&mut self) -> io::Result<()> {
        self.file
            .start_writeback()
            .map_err(|e| with_path(e, &self.path))
    }
}

struct NamedRandom {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
}

impl RandomAccessFile for NamedRandom {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.file
            .read_at(offset, len)
            .map_err(|e| with_path(e, &self.path))
    }
    fn size(&self) -> u64 {
        self.file.size()
    }
    fn map(&self) -> Option<&Arc<FileMap>> {
        self.file.map()
    }
}

impl FileSystem for NamedFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.0.create_dir_all(path).map_err(|e| with_path(e, path))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        NamedWritable::wrap(self.0.create(path), path)
    }
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        NamedWritable::wrap(self.0.create_log(path), path)
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = self
            .0
            .open_random(path, direct)
            .map_err(|e| with_path(e, path))?;
        Ok(Arc::new(NamedRandom {
            file,
            path: path.to_path_buf(),
        }))
    }
    fn open_mapped(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = self.0.open_mapped(path).map_err(|e| with_path(e, path))?;
        Ok(Arc::new(NamedRandom {
            file,
            path: path.to_path_buf(),
        }))
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.0.read_all(path).map_err(|e| with_path(e, path))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.rename(from, to).map_err(|e| {
            let both = format!("{} -> {}", from.display(), to.display());
            with_path(e, Path::new(&both))
        })
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.remove_file(path).map_err(|e| with_path(e, path))
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.0.list_dir(path).map_err(|e| with_path(e, path))
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.0.sync_dir(path).map_err(|e| with_path(e, path))
    }
    fn exists(&self, path: &Path) -> bool {
        self.0.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.0.is_dir(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        self.0.file_size(path).map_err(|e| with_path(e, path))
    }
    fn file_sizes(&self, dir: &Path, names: &[&str]) -> Vec<io::Result<u64>> {
        let sizes = self.0.file_sizes(dir, names);
        sizes
            .into_iter()
            .zip(names)
            .map(|(r, n)| r.map_err(|e| with_path(e, &dir.join(n))))
            .collect()
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.0.lock(path).map_err(|e| with_path(e, path))
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.hard_link(from, to).map_err(|e| {
            let both = format!("{} -> {}", from.display(), to.display());
            with_path(e, Path::new(&both))
        })
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.0.remove_dir(path).map_err(|e| with_path(e, path))
    }
}
