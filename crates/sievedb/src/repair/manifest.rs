//! What the MANIFESTs left in the directory still tell repair, each read
//! once up to its first damage: the keyspaces, the WALs already flushed,
//! what every file they ever added held, and which tables were live.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::io::{filename, FileSystem};
use crate::key::SeqNo;
use crate::version::NewFile;
use crate::wal::{DamageKind, LogItem, LogReader};

/// A file as a MANIFEST record added it.
pub(super) struct Recorded {
    /// Its keyspace's id.
    pub keyspace: u32,
    /// The record (level, size, entries, key range, range tombstones).
    pub file: NewFile,
}

/// The facts of the readable records of every MANIFEST present.
#[derive(Default)]
pub(super) struct ManifestFacts {
    /// Names by id of the keyspaces created and not dropped.
    pub names: BTreeMap<u32, String>,
    /// Ids of the keyspaces dropped.
    pub dropped: Vec<u32>,
    /// The next unused keyspace id.
    pub next_id: u32,
    /// The largest `log_number` of any record: WALs numbered below it were
    /// flushed (0 when no MANIFEST is readable).
    pub log_number: u64,
    /// The largest `last_sequence` of any record: the writes of a lost
    /// table had sequence numbers up to it, which the new MANIFEST must not
    /// go back behind.
    pub last_sequence: SeqNo,
    /// Every file a record added, by number (a file number is never
    /// reused, so a record describes that very file; a move re-adds it at
    /// another level, and the last record read wins).
    pub recorded: BTreeMap<u64, Recorded>,
    /// The live tables of the MANIFEST `CURRENT` names (else of the newest
    /// one), by number, when it reads to its end (a torn last record, as
    /// an open drops it, allowed): the state of a MANIFEST damaged before
    /// its end is an older one, which may list tables that compactions
    /// deleted since.
    pub live: Option<BTreeSet<u64>>,
}

impl ManifestFacts {
    /// Reads the MANIFESTs `manifests` (numbers) of `dir`.
    pub fn read(fs: &dyn FileSystem, dir: &Path, manifests: &[u64]) -> ManifestFacts {
        let mut facts = ManifestFacts::default();
        let chosen = current_manifest(fs, dir).filter(|n| manifests.contains(n));
        let chosen = chosen.or(manifests.iter().copied().max());
        for &n in manifests {
            let (records, intact) = records(fs, &filename::manifest(dir, n));
            // file number -> keyspace, for the live set of the chosen one.
            let mut live: BTreeMap<u64, u32> = BTreeMap::new();
            let mut whole = intact;
            for rec in records {
                let Ok(edits) = crate::version::decode_record(&rec) else {
                    whole = false;
                    break;
                };
                for e in edits {
                    facts.learn(&e, &mut live);
                }
            }
            if Some(n) == chosen && whole {
                facts.live = Some(live.into_keys().collect());
            }
        }
        facts
    }

    /// Takes in one edit; `live` follows the files of its MANIFEST.
    fn learn(&mut self, e: &crate::version::VersionEdit, live: &mut BTreeMap<u64, u32>) {
        for k in &e.created {
            self.next_id = self.next_id.max(k.id + 1);
            self.names.insert(k.id, k.name.clone());
        }
        for &id in &e.dropped {
            self.names.remove(&id);
            self.dropped.push(id);
            live.retain(|_, ks| *ks != id);
        }
        self.next_id = self.next_id.max(e.next_keyspace_id.unwrap_or(0));
        self.log_number = self.log_number.max(e.log_number.unwrap_or(0));
        self.last_sequence = self.last_sequence.max(e.last_sequence.unwrap_or(0));
        for (_, number) in &e.deleted {
            live.remove(number);
        }
        for f in &e.added {
            live.insert(f.number, e.keyspace);
            self.recorded.insert(
                f.number,
                Recorded {
                    keyspace: e.keyspace,
                    file: f.clone(),
                },
            );
        }
    }

    /// The name of keyspace `id` as the MANIFESTs know it (`default` for
    /// the default keyspace; `keyspace-<id>` for one they never name).
    pub fn name_of(&self, id: u32) -> String {
        match (id, self.names.get(&id)) {
            (0, _) => crate::keyspace::DEFAULT.to_string(),
            (_, Some(n)) => n.clone(),
            (_, None) => format!("keyspace-{id}"),
        }
    }
}

/// The records of MANIFEST `path` up to its first damage, and whether there
/// was none. Only a last record cut short or zeros count as its end here:
/// an open also drops a damaged last edit no intact record follows (a torn
/// write, `wal::read_records`) once it checked that nothing relied on
/// it, which repair cannot tell, so such a MANIFEST may tell an older state
/// and no table is called missing by it.
fn records(fs: &dyn FileSystem, path: &Path) -> (Vec<Vec<u8>>, bool) {
    let mut out = Vec::new();
    let Ok(file) = fs.open_random(path, false) else {
        return (out, false);
    };
    let mut reader = LogReader::new(file.as_ref(), path);
    loop {
        match reader.next_item() {
            Ok(LogItem::Record { payload, .. }) => out.push(payload.to_vec()),
            Ok(LogItem::End) => return (out, true),
            Ok(LogItem::Damaged(d)) => {
                let end = matches!(d.kind, DamageKind::Truncated | DamageKind::Zeroed);
                return (out, end);
            }
            Err(_) => return (out, false),
        }
    }
}

/// The number of the MANIFEST `CURRENT` names, if it names one.
fn current_manifest(fs: &dyn FileSystem, dir: &Path) -> Option<u64> {
    let cur = fs.read_all(&filename::current(dir)).ok()?;
    let name = std::str::from_utf8(&cur).ok()?.strip_suffix('\n')?;
    match filename::parse(name)? {
        filename::FileKind::Manifest(n) => Some(n),
        _ => None,
    }
}
