//! Replaying the write-ahead logs at open, under the recovery rule of
//! `docs/format.md` ("WAL recovery") and the [`WalRecovery`] mode:
//! [`replay_wals`], and [`keep_lost`] for what point-in-time recovery did
//! not apply.
//!
//! Invariants the rule rests on (kept by `db/write.rs`): a WAL is synced
//! whole before the next one receives its first write, so only the newest
//! WAL holding bytes can have an unsynced end; a WAL's size is never synced
//! on its own (a preallocated WAL may keep its reserved zeros after a power
//! loss), so an older WAL's all-zero tail is its end when the next WAL
//! continues its sequence numbers; and the first group commit after a sync
//! starts with a sync mark, so damage in the newest WAL that an intact mark
//! after it covers lies in synced bytes.

use super::*;
use crate::wal::{scan_remains, sync_mark};

/// Where replay stopped: the index of the WAL in the list, the damage, and
/// the WAL's size.
type Stop = (usize, Damage, u64);

/// Where WAL replay starts, from the MANIFEST.
pub(super) struct Start {
    /// The MANIFEST's last sequence number.
    pub(super) last_sequence: SeqNo,
    /// Recovering the MANIFEST dropped a torn last edit holding data: a
    /// sequence gap before the first WAL record would show it had been
    /// relied on (the open then fails in every mode, naming `manifest`).
    pub(super) torn_edit: bool,
    /// The MANIFEST recovered.
    pub(super) manifest: PathBuf,
}

/// Replays WALs `wals` (oldest first) under `opts.wal_recovery`, handing the
/// memtables (one per keyspace `live` keeps; it skips a dropped one's
/// entries and refuses an unknown one's) to `full` when they fill up, and
/// at the end. Reads each WAL with a streaming [`LogReader`], so memory is
/// bounded by the memtables plus the largest record and one read chunk.
pub(super) fn replay_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    wals: &[u64],
    opts: &Options,
    start: Start,
    live: impl Fn(u32) -> std::result::Result<bool, String>,
    mut full: impl FnMut(BTreeMap<u32, Arc<Memtable>>) -> Result<()>,
) -> Result<RecoveryReport> {
    let manifest_seq = start.last_sequence;
    let mode = opts.wal_recovery;
    let mut report = RecoveryReport {
        mode,
        wals: wals.to_vec(),
        last_sequence: manifest_seq,
        ..RecoveryReport::default()
    };
    let sizes = wals
        .iter()
        .map(|&w| Ok(crate::wal::log_size(fs, &filename::wal(dir, w))?))
        .collect::<Result<Vec<u64>>>()?;
    let newest = sizes.iter().rposition(|&s| s > 0);
    // The sequence number the next record must start at (a gap means lost writes).
    let mut expected: Option<SeqNo> = None;
    // An older WAL that ended in zeros: its end, if the next record continues.
    let mut zero_end: Option<Stop> = None;
    let mut stop: Option<Stop> = None;
    let mut mems: BTreeMap<u32, Arc<Memtable>> = BTreeMap::new();
    'wals: for (i, &w) in wals.iter().enumerate() {
        if sizes[i] == 0 {
            continue;
        }
        let path = filename::wal(dir, w);
        let file = fs.open_random(&path, false)?;
        let mut reader = LogReader::new(file.as_ref(), &path);
        let size = reader.file_size();
        loop {
            let (offset, payload) = match reader.next_item()? {
                LogItem::End => continue 'wals,
                LogItem::Damaged(d) if Some(i) != newest && d.kind == DamageKind::Zeroed => {
                    zero_end = Some((i, d, size));
                    continue 'wals;
                }
                LogItem::Damaged(d) => {
                    stop = Some((i, d, size));
                    break 'wals;
                }
                LogItem::Record { offset, payload } => (offset, payload),
            };
            report.bytes_applied += (HEADER_LEN + payload.len()) as u64;
            if sync_mark::parse(payload).is_some() {
                continue;
            }
            let bad = |detail: String| {
                let kind = DamageKind::Corrupt;
                Some((
                    i,
                    Damage {
                        offset,
                        kind,
                        detail,
                    },
                    size,
                ))
            };
            let (seq, entries) = match batch::decode(payload) {
                Ok(x) => x,
                Err(d) => {
                    stop = bad(format!("record holds no valid write batch ({d})"));
                    break 'wals;
                }
            };
            let contiguous = match expected {
                Some(e) => seq == e,
                None => seq <= manifest_seq + 1,
            };
            if !contiguous {
                if start.torn_edit && expected.is_none() {
                    return Err(Error::corruption(
                        &start.manifest,
                        format!(
                            "its last edit is damaged, and the WALs start after a gap (sequence \
                             {seq}, the MANIFEST ends at {manifest_seq}): the damaged edit had been \
                             relied on; run Db::repair"
                        ),
                    ));
                }
                // Writes are missing: those an older WAL's zero tail hid, or a WAL.
                stop = zero_end.take().or_else(|| {
                    bad(format!(
                        "sequence gap (record starts at sequence {seq}, the writes before end \
                         at {}): a WAL is missing",
                        expected.map_or(manifest_seq, |e| e - 1)
                    ))
                });
                break 'wals;
            }
            zero_end = None;
            if let Some(d) = entries.iter().find_map(|e| live(e.keyspace).err()) {
                stop = bad(d);
                break 'wals;
            }
            for (j, e) in entries.iter().enumerate() {
                if live(e.keyspace) == Ok(true) {
                    let mem = mems
                        .entry(e.keyspace)
                        .or_insert_with(|| Arc::new(Memtable::new(0)));
                    mem.apply(seq + j as u64, e);
                }
            }
            let n = entries.len() as u64;
            report.last_sequence = report.last_sequence.max(seq + n - u64::from(n > 0));
            expected = Some(seq + n);
            report.records_applied += 1;
            if mems.values().map(|m| m.approximate_size()).sum::<usize>() >= opts.write_buffer_size
            {
                full(std::mem::take(&mut mems))?;
            }
        }
    }
    if let Some((i, damage, size)) = stop {
        let lost = Unapplied {
            fs,
            dir,
            wals,
            sizes: &sizes,
            newest,
        };
        report.dropped = Some(lost.dropped(i, damage, size, &mut report)?);
        #[expect(clippy::expect_used, reason = "set just above")]
        let d = report.dropped.as_ref().expect("just set");
        let fail = match mode {
            WalRecovery::AbsoluteConsistency => true,
            WalRecovery::TolerateCorruptedTail => !d.torn_tail,
            WalRecovery::PointInTime => false,
        };
        if fail {
            return Err(Error::corruption(
                &d.path,
                format!(
                    "{} at offset {} (WAL recovery mode {mode:?}; WalRecovery::PointInTime \
                     opens the database as of the last good write before it)",
                    d.detail, d.offset
                ),
            ));
        }
    }
    mems.retain(|_, m| !m.is_empty());
    if !mems.is_empty() {
        full(mems)?;
    }
    Ok(report)
}

/// The WALs replay read, to say what it did not apply.
struct Unapplied<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    wals: &'a [u64],
    /// Their sizes (0: nothing but zeros).
    sizes: &'a [u64],
    /// The index of the newest WAL holding bytes.
    newest: Option<usize>,
}

impl Unapplied<'_> {
    /// What replay did not apply when it stopped at `damage` in WAL
    /// `wals[i]` (of `size` bytes): the rest of that WAL and every newer WAL
    /// holding bytes, with the intact records and writes found in them
    /// (`report`'s dropped counts), and whether it is only a torn tail of the
    /// newest WAL (see the module docs).
    fn dropped(
        &self,
        i: usize,
        damage: Damage,
        size: u64,
        report: &mut RecoveryReport,
    ) -> Result<WalDrop> {
        let (fs, dir, wals, sizes) = (self.fs, self.dir, self.wals, self.sizes);
        let path = filename::wal(dir, wals[i]);
        let file = fs.open_random(&path, false)?;
        let rest = scan_remains(file.as_ref(), &path, damage.offset)?;
        let torn_tail = Some(i) == self.newest && crate::wal::is_torn_tail(&damage, &rest);
        let skipped: Vec<usize> = (i + 1..wals.len()).filter(|&j| sizes[j] > 0).collect();
        // The damaged record counts too, unless it is zeros (a preallocated
        // tail, or a hole a power loss left) or counted as intact already.
        let head = (size - damage.offset).min(HEADER_LEN as u64) as usize;
        let damaged = rest.first_record != Some(damage.offset)
            && file.read_at(damage.offset, head)?.iter().any(|&b| b != 0);
        let mut records = rest.records + u64::from(damaged);
        let (mut entries, mut bytes) = (rest.entries, rest.data_bytes);
        for &j in &skipped {
            let p = filename::wal(dir, wals[j]);
            let r = scan_remains(fs.open_random(&p, false)?.as_ref(), &p, 0)?;
            records += r.records;
            entries += r.entries;
            bytes += r.data_bytes;
        }
        report.records_dropped = records;
        report.entries_dropped = entries;
        report.bytes_dropped = bytes;
        Ok(WalDrop {
            wal_number: wals[i],
            path,
            offset: damage.offset,
            bytes: size.saturating_sub(damage.offset),
            kind: damage.kind,
            detail: damage.detail,
            torn_tail,
            skipped_wals: skipped.iter().map(|&j| wals[j]).collect(),
            skipped_bytes: skipped.iter().map(|&j| sizes[j]).sum(),
            kept_in: None,
        })
    }
}

/// Keeps the WALs point-in-time recovery did not (fully) apply in
/// `dir/lost/`: the damaged WAL is copied (its good prefix must stay
/// replayable until the recovery edit is durable; it is deleted as obsolete
/// after), the skipped newer WALs are moved (they will not be replayed).
pub(super) fn keep_lost(fs: &dyn FileSystem, dir: &Path, drop: &WalDrop) -> Result<PathBuf> {
    let lost = filename::lost(dir);
    crate::io::create_dir_all_durable(fs, &lost)?;
    let src = fs.open_random(&drop.path, false)?;
    let name = |n: u64| lost.join(format!("{n:06}.log"));
    let mut out = fs.create(&name(drop.wal_number))?;
    let mut off = 0;
    while off < src.size() {
        let n = (src.size() - off).min(crate::wal::READ_CHUNK as u64) as usize;
        out.append(&src.read_at(off, n)?)?;
        off += n as u64;
    }
    out.sync()?;
    for &w in &drop.skipped_wals {
        fs.rename(&filename::wal(dir, w), &name(w))?;
    }
    fs.sync_dir(&lost)?;
    fs.sync_dir(dir)?;
    Ok(lost)
}
