//! What a repair found and did: [`RepairReport`], and a [`LostTable`] for
//! every table whose entries it could not all read.

use std::path::PathBuf;

use crate::key::SeqNo;

/// What [`Db::repair`](crate::Db::repair) found and did.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put("k", "v")?;
/// db.flush()?;
/// db.close()?;
/// // The MANIFEST is lost: the database no longer opens.
/// # for entry in std::fs::read_dir(dir.path())? {
/// #     let path = entry?.path();
/// #     if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("MANIFEST-")) {
/// #         std::fs::remove_file(path)?;
/// #     }
/// # }
/// assert!(Db::open(dir.path(), Options::default()).is_err());
/// let report = Db::repair(dir.path(), Options::default())?;
/// assert_eq!((report.tables_read, report.tables_damaged, report.entries_lost), (1, 0, 0));
/// assert_eq!(report.entries_kept, 1);
/// let db = Db::open(dir.path(), Options::default())?;
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RepairReport {
    /// SSTs read in full.
    pub tables_read: usize,
    /// SSTs that failed to open or to read in full (moved to `lost/`): one
    /// per entry of [`damaged_tables`](Self::damaged_tables).
    pub tables_damaged: usize,
    /// What each damaged SST held, what of it was salvaged, and why it
    /// failed, by file number.
    pub damaged_tables: Vec<LostTable>,
    /// SSTs the MANIFEST lists as live that are not in the directory (only
    /// when that MANIFEST reads whole, see the module docs), by file
    /// number: what each held is lost, unless a WAL still holds it.
    pub tables_missing: Vec<LostTable>,
    /// Entries read from the intact blocks of damaged SSTs (kept).
    pub entries_salvaged: u64,
    /// Entries lost: those of the missing SSTs, and of each damaged SST what
    /// it held (its properties, else its MANIFEST record) less what was
    /// salvaged. A damaged SST that neither its properties nor a readable
    /// MANIFEST describe (its [`LostTable::entries`] is `None`) adds 0, so
    /// the figure is then a lower bound.
    pub entries_lost: u64,
    /// WALs read (including damaged ones).
    pub wals_read: usize,
    /// WALs with damage before their tail (moved to `lost/`; their records
    /// from the damage on are lost).
    pub wals_damaged: usize,
    /// WALs skipped because a MANIFEST record shows they were already
    /// flushed (see the module docs).
    pub wals_stale: usize,
    /// Entries (puts and deletes) merged from the other WALs.
    pub wal_entries: u64,
    /// Entries merged: from whole tables, salvaged entries and WALs.
    pub entries_read: u64,
    /// Entries written: the newest version of every key (a tombstone for a
    /// deleted key).
    pub entries_kept: u64,
    /// Level the new files were written to (one run).
    pub level: usize,
    /// Numbers of the new SSTs.
    pub output_files: Vec<u64>,
    /// Bytes of the new SSTs.
    pub output_bytes: u64,
    /// Number of the new MANIFEST (`CURRENT` names it).
    pub manifest_number: u64,
    /// Largest sequence number seen in the tables and WALs or recorded by a
    /// readable MANIFEST record (the new MANIFEST's `last_sequence`: it
    /// never goes back, even when the newest writes were lost).
    pub last_sequence: SeqNo,
    /// The keyspaces rebuilt besides the default one, by name.
    pub keyspaces: Vec<String>,
    /// Old MANIFESTs replaced (moved to `lost/`).
    pub manifests_replaced: usize,
    /// Files moved to `lost/`, by their new path.
    pub lost_files: Vec<PathBuf>,
}

/// How repair found the data blocks of a table it could not read in full.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options, SalvageMethod};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// for i in 0..1000 {
///     db.put(format!("key{i:03}"), "value")?;
/// }
/// db.flush()?;
/// db.close()?;
/// // A bit flips in the first data block of the table.
/// # let sst = std::fs::read_dir(dir.path())?
/// #     .map(|e| e.map(|e| e.path()))
/// #     .find(|p| p.as_ref().is_ok_and(|p| p.extension().is_some_and(|x| x == "sst")))
/// #     .unwrap()?;
/// # let mut bytes = std::fs::read(&sst)?;
/// # bytes[10] ^= 0x20;
/// # std::fs::write(&sst, bytes)?;
/// let report = Db::repair(dir.path(), Options::default())?;
/// let table = &report.damaged_tables[0];
/// assert_eq!(table.method, SalvageMethod::Index); // its index found the other blocks
/// assert_eq!(table.blocks_lost, Some(1));
/// assert!(table.salvaged > 0 && table.lost > 0);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum SalvageMethod {
    /// Through the table's index block: every data block it lists was read,
    /// the damaged ones skipped.
    Index,
    /// The index was unreadable: the file was scanned for checksummed
    /// blocks (see the module docs).
    Scan,
    /// Nothing was read: the file is missing or could not be read at all.
    #[default]
    Nothing,
}

/// A table whose entries repair could not all read: damaged (read in part,
/// then moved to `lost/`) or missing (listed by the MANIFEST, not in the
/// directory).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options, SalvageMethod};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// for i in 0..100 {
///     db.put(format!("key{i:02}"), "value")?;
/// }
/// db.flush()?;
/// db.close()?;
/// // The table is deleted by mistake.
/// # for entry in std::fs::read_dir(dir.path())? {
/// #     let path = entry?.path();
/// #     if path.extension().is_some_and(|x| x == "sst") {
/// #         std::fs::remove_file(path)?;
/// #     }
/// # }
/// let report = Db::repair(dir.path(), Options::default())?;
/// let lost = &report.tables_missing[0];
/// assert_eq!((lost.level, lost.entries, lost.lost), (Some(0), Some(100), 100));
/// assert_eq!((&lost.smallest[..], &lost.largest[..]), (&b"key00"[..], &b"key99"[..]));
/// assert_eq!(lost.method, SalvageMethod::Nothing);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct LostTable {
    /// Its file number (`NNNNNN.sst`).
    pub number: u64,
    /// Its keyspace by name: its properties' or its MANIFEST record's
    /// (`default` for the default keyspace; empty when neither is readable,
    /// and then what was salvaged went to the default keyspace).
    pub keyspace: String,
    /// Its level, when a MANIFEST record names the file.
    pub level: Option<usize>,
    /// Entries it held: its properties' count, else its MANIFEST record's;
    /// `None` when neither is readable.
    pub entries: Option<u64>,
    /// Entries read from its intact data blocks (kept).
    pub salvaged: u64,
    /// `entries − salvaged` (0 when `entries` is `None`).
    pub lost: u64,
    /// Its smallest user key (properties, else MANIFEST; empty when
    /// neither is readable).
    pub smallest: Vec<u8>,
    /// Its largest user key (as `smallest`).
    pub largest: Vec<u8>,
    /// Data blocks read whole.
    pub blocks_salvaged: u64,
    /// Data blocks it held that could not be read: those its index lists
    /// that failed, or (index unreadable) its properties' count less those
    /// found; `None` when neither index nor properties are readable.
    pub blocks_lost: Option<u64>,
    /// Range tombstones it held whose block could not be read: the older
    /// values they deleted may reappear.
    pub range_dels_lost: u64,
    /// How its data blocks were found.
    pub method: SalvageMethod,
    /// Why it is here: the error of reading it in full, or that it is
    /// missing.
    pub detail: String,
}
