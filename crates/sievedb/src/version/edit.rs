//! [`VersionEdit`]: a change to a version, as the MANIFEST logs it, and its
//! codec (the format is in `docs/format.md`).

use crate::coding::{put_bytes, put_varint, Reader};
use crate::key::SeqNo;

use super::Version;

/// Tag 8's value: every value ends in an 8-byte TTL write-time stamp.
const VALUE_FORMAT_TTL: u64 = 1;

/// A change to a version, logged in the MANIFEST.
///
/// Encoding: a sequence of tagged fields; tag (varint) then payload:
/// 1 log_number, 2 next_file_number, 3 last_sequence (varints);
/// 4 delete file: level, number; 5 add file: level, run, number, size, entries
/// (varints), smallest, largest (length-prefixed internal keys); 6 add a file
/// holding range tombstones: the fields of 5 then `range_dels` (varint, > 0).
/// Tag 6 is written only for files with range tombstones, so databases that
/// never used range deletes keep a MANIFEST older builds read, and older
/// builds refuse (unknown tag) a MANIFEST whose files they would misread.
/// 7 add a file with its creation time: the fields of 5, `range_dels`
/// (varint, may be 0), `creation_time` (varint seconds since the epoch, > 0);
/// written instead of 5 or 6 for files that have one (periodic compaction
/// on). 8 value format: varint 1 = every value carries a TTL write-time
/// stamp (written in the first edit of such a database and at the start of
/// each of its MANIFESTs).
///
/// Keyspaces: 9 keyspace context: varint id; the deletes and adds after it,
/// up to the next tag 9, belong to that keyspace (before any tag 9: the
/// default keyspace, id 0, as in every MANIFEST older builds wrote). One
/// MANIFEST record may hold several contexts (an atomic flush of several
/// keyspaces: [`encode_record`]). 10 create a keyspace: id (varint), name
/// (length-prefixed UTF-8), flags (varint; bit 0: its values carry TTL
/// write-time stamps). 11 drop a keyspace: id. 12 next unused keyspace id
/// (ids are never reused, so a WAL entry of a dropped keyspace is known as
/// such at replay). Older builds refuse (unknown tag) a MANIFEST with any of
/// them, instead of reading another keyspace's files as the default one's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VersionEdit {
    /// The keyspace the deleted and added files belong to (0: the default).
    pub keyspace: u32,
    /// Keyspaces created.
    pub created: Vec<KeyspaceRecord>,
    /// Keyspaces dropped (by id).
    pub dropped: Vec<u32>,
    /// The next unused keyspace id.
    pub next_keyspace_id: Option<u32>,
    /// WALs numbered below this are no longer needed.
    pub log_number: Option<u64>,
    /// Next unused file number.
    pub next_file_number: Option<u64>,
    /// Last sequence number written to an SST or WAL.
    pub last_sequence: Option<SeqNo>,
    /// (level, file number) removed.
    pub deleted: Vec<(usize, u64)>,
    /// Files added.
    pub added: Vec<NewFile>,
    /// The database's values carry TTL write-time stamps (tag 8).
    pub ttl_stamped: bool,
}

/// A keyspace as the MANIFEST records its creation (tag 10).
#[derive(Clone, Debug, PartialEq)]
pub struct KeyspaceRecord {
    /// Its id (> 0; never reused).
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Its values carry TTL write-time stamps.
    pub ttl_stamped: bool,
}

/// Flag bit of [`KeyspaceRecord::ttl_stamped`] in tag 10.
const KEYSPACE_TTL: u64 = 1;

/// Encodes `edits` as one MANIFEST record: applied together or not at all.
pub fn encode_record(edits: &[VersionEdit]) -> Vec<u8> {
    let mut b = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        if i > 0 && e.keyspace == 0 {
            // Back to the default keyspace's context.
            put_varint(&mut b, 9);
            put_varint(&mut b, 0);
        }
        b.extend_from_slice(&e.encode());
    }
    b
}

/// Decodes one MANIFEST record into its edits, one per keyspace context.
pub fn decode_record(b: &[u8]) -> std::result::Result<Vec<VersionEdit>, String> {
    let mut edits = vec![VersionEdit::default()];
    VersionEdit::decode_into(b, &mut edits)?;
    Ok(edits)
}

/// A file added by an edit.
#[derive(Clone, Debug, PartialEq)]
pub struct NewFile {
    /// Level.
    pub level: usize,
    /// Run id.
    pub run: u64,
    /// File number.
    pub number: u64,
    /// Size.
    pub size: u64,
    /// Entries.
    pub entries: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Range tombstones in the file.
    pub range_dels: u64,
    /// When the file was written (seconds since the epoch; 0 = not recorded).
    pub creation_time: u64,
}

impl VersionEdit {
    /// Encodes the edit.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        if self.keyspace != 0 {
            put_varint(&mut b, 9);
            put_varint(&mut b, u64::from(self.keyspace));
        }
        for k in &self.created {
            put_varint(&mut b, 10);
            put_varint(&mut b, u64::from(k.id));
            put_bytes(&mut b, k.name.as_bytes());
            put_varint(&mut b, if k.ttl_stamped { KEYSPACE_TTL } else { 0 });
        }
        for &id in &self.dropped {
            put_varint(&mut b, 11);
            put_varint(&mut b, u64::from(id));
        }
        if let Some(id) = self.next_keyspace_id {
            put_varint(&mut b, 12);
            put_varint(&mut b, u64::from(id));
        }
        for (tag, v) in [
            (1u64, self.log_number),
            (2, self.next_file_number),
            (3, self.last_sequence),
        ] {
            if let Some(v) = v {
                put_varint(&mut b, tag);
                put_varint(&mut b, v);
            }
        }
        for &(level, number) in &self.deleted {
            put_varint(&mut b, 4);
            put_varint(&mut b, level as u64);
            put_varint(&mut b, number);
        }
        if self.ttl_stamped {
            put_varint(&mut b, 8);
            put_varint(&mut b, VALUE_FORMAT_TTL);
        }
        for f in &self.added {
            let tag = match (f.creation_time, f.range_dels) {
                (0, 0) => 5,
                (0, _) => 6,
                _ => 7,
            };
            put_varint(&mut b, tag);
            for v in [f.level as u64, f.run, f.number, f.size, f.entries] {
                put_varint(&mut b, v);
            }
            put_bytes(&mut b, &f.smallest);
            put_bytes(&mut b, &f.largest);
            if tag != 5 {
                put_varint(&mut b, f.range_dels);
            }
            if tag == 7 {
                put_varint(&mut b, f.creation_time);
            }
        }
        b
    }

    /// Decodes an edit of one keyspace context (a record holding several
    /// is an error here: see [`decode_record`]).
    #[cfg(any(test, feature = "internals"))]
    #[expect(
        clippy::expect_used,
        reason = "the match arm checked that there is one edit"
    )]
    pub fn decode(b: &[u8]) -> std::result::Result<VersionEdit, String> {
        let mut edits = vec![VersionEdit::default()];
        Self::decode_into(b, &mut edits)?;
        match edits.len() {
            1 => Ok(edits.pop().expect("one edit")),
            _ => Err("record holds several keyspace contexts".into()),
        }
    }

    /// Decodes `b` onto the last of `edits`, starting a new edit at each
    /// keyspace context (tag 9) after the first field.
    #[expect(
        clippy::expect_used,
        reason = "callers pass at least one edit, and `edits` only grows"
    )]
    fn decode_into(b: &[u8], edits: &mut Vec<VersionEdit>) -> std::result::Result<(), String> {
        let mut r = Reader::new(b);
        let t = || "version edit truncated".to_string();
        let id = |v: u64| u32::try_from(v).map_err(|_| format!("keyspace id {v} out of range"));
        let mut fields = 0;
        while r.remaining() > 0 {
            let tag = r.varint().ok_or_else(t)?;
            if tag == 9 {
                let ks = id(r.varint().ok_or_else(t)?)?;
                if fields > 0 {
                    edits.push(VersionEdit::default());
                }
                edits.last_mut().expect("an edit").keyspace = ks;
                fields += 1;
                continue;
            }
            fields += 1;
            let e = edits.last_mut().expect("an edit");
            match tag {
                10 => {
                    let ks = id(r.varint().ok_or_else(t)?)?;
                    let name = std::str::from_utf8(r.bytes().ok_or_else(t)?)
                        .map_err(|_| "keyspace name is not UTF-8".to_string())?
                        .to_string();
                    let flags = r.varint().ok_or_else(t)?;
                    if ks == 0 || flags & !KEYSPACE_TTL != 0 {
                        return Err(format!("bad keyspace record (id {ks}, flags {flags})"));
                    }
                    e.created.push(KeyspaceRecord {
                        id: ks,
                        name,
                        ttl_stamped: flags & KEYSPACE_TTL != 0,
                    });
                }
                11 => e.dropped.push(id(r.varint().ok_or_else(t)?)?),
                12 => e.next_keyspace_id = Some(id(r.varint().ok_or_else(t)?)?),
                1 => e.log_number = Some(r.varint().ok_or_else(t)?),
                2 => e.next_file_number = Some(r.varint().ok_or_else(t)?),
                3 => e.last_sequence = Some(r.varint().ok_or_else(t)?),
                4 => {
                    let level = r.varint().ok_or_else(t)? as usize;
                    e.deleted.push((level, r.varint().ok_or_else(t)?));
                }
                8 => match r.varint().ok_or_else(t)? {
                    VALUE_FORMAT_TTL => e.ttl_stamped = true,
                    f => return Err(format!("unknown value format {f}")),
                },
                tag @ (5..=7) => {
                    let mut v = [0u64; 5];
                    for x in &mut v {
                        *x = r.varint().ok_or_else(t)?;
                    }
                    let smallest = r.bytes().ok_or_else(t)?.to_vec();
                    let largest = r.bytes().ok_or_else(t)?.to_vec();
                    if smallest.len() < 8 || largest.len() < 8 {
                        return Err("file key range malformed".into());
                    }
                    let range_dels = if tag != 5 {
                        r.varint().ok_or_else(t)?
                    } else {
                        0
                    };
                    let creation_time = if tag == 7 {
                        r.varint().ok_or_else(t)?
                    } else {
                        0
                    };
                    e.added.push(NewFile {
                        level: v[0] as usize,
                        run: v[1],
                        number: v[2],
                        size: v[3],
                        entries: v[4],
                        smallest,
                        largest,
                        range_dels,
                        creation_time,
                    });
                }
                tag => return Err(format!("unknown version edit tag {tag}")),
            }
        }
        Ok(())
    }
}

impl VersionEdit {
    /// An edit adding every file of `v` at its level and run (the first
    /// record of a fresh MANIFEST; the caller sets the numbers).
    pub fn adding_all_of(v: &Version) -> VersionEdit {
        let mut snap = VersionEdit::default();
        for (level, runs) in v.levels.iter().enumerate() {
            for run in runs {
                for f in &run.files {
                    snap.added.push(f.placed_at(level, run.id));
                }
            }
        }
        snap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key;

    #[test]
    fn files_with_range_tombstones_use_tag_6() {
        let file = |number, range_dels| NewFile {
            level: 1,
            run: 0,
            number,
            size: 10,
            entries: 1,
            smallest: key::internal_key(b"a", 1, key::Kind::Put),
            largest: key::internal_key(b"b", 1, key::Kind::Put),
            range_dels,
            creation_time: 0,
        };
        let plain = VersionEdit {
            added: vec![file(7, 0)],
            ..VersionEdit::default()
        };
        let with = VersionEdit {
            added: vec![file(7, 0), file(8, 3)],
            ..VersionEdit::default()
        };
        assert_eq!(plain.encode()[0], 5);
        assert_eq!(VersionEdit::decode(&plain.encode()).unwrap(), plain);
        assert_eq!(VersionEdit::decode(&with.encode()).unwrap(), with);
        assert!(with.encode().contains(&6));
        let b = with.encode();
        assert!(VersionEdit::decode(&b[..b.len() - 1]).is_err());
    }

    #[test]
    fn creation_times_use_tag_7_and_the_ttl_marker_tag_8() {
        let file = |number, range_dels, creation_time| NewFile {
            level: 2,
            run: 0,
            number,
            size: 10,
            entries: 1,
            smallest: key::internal_key(b"a", 1, key::Kind::Put),
            largest: key::internal_key(b"b", 1, key::Kind::Put),
            range_dels,
            creation_time,
        };
        let e = VersionEdit {
            added: vec![file(7, 0, 1_700_000_000), file(8, 2, 5), file(9, 0, 0)],
            ttl_stamped: true,
            ..VersionEdit::default()
        };
        let b = e.encode();
        assert_eq!(&b[..2], &[8, 1]);
        assert_eq!(b[2], 7);
        assert_eq!(VersionEdit::decode(&b).unwrap(), e);
        assert!(
            VersionEdit::decode(&[8, 2]).is_err(),
            "unknown value format"
        );
        let plain = VersionEdit::default();
        assert!(plain.encode().is_empty());
    }

    #[test]
    fn keyspace_contexts_creates_and_drops_round_trip_in_one_record() {
        let file = |number| NewFile {
            level: 0,
            run: number,
            number,
            size: 10,
            entries: 1,
            smallest: key::internal_key(b"a", 1, key::Kind::Put),
            largest: key::internal_key(b"b", 1, key::Kind::Put),
            range_dels: 0,
            creation_time: 0,
        };
        let edits = vec![
            VersionEdit {
                log_number: Some(9),
                created: vec![KeyspaceRecord {
                    id: 2,
                    name: "events".into(),
                    ttl_stamped: true,
                }],
                dropped: vec![1],
                next_keyspace_id: Some(3),
                added: vec![file(5)],
                ..VersionEdit::default()
            },
            VersionEdit {
                keyspace: 2,
                added: vec![file(6)],
                deleted: vec![(1, 4)],
                ..VersionEdit::default()
            },
            VersionEdit {
                added: vec![file(7)],
                ..VersionEdit::default()
            },
        ];
        let b = encode_record(&edits);
        assert_eq!(decode_record(&b).unwrap(), edits);
        assert!(VersionEdit::decode(&b).is_err(), "several contexts");
        // A default-keyspace edit alone encodes as before keyspaces.
        assert_eq!(edits[2].encode()[0], 5);
        assert_eq!(edits[1].encode()[..2], [9, 2]);
        assert!(
            decode_record(&[10, 0, 1, b'x', 0]).is_err(),
            "keyspace id 0"
        );
        assert!(decode_record(&[10, 1, 1, b'x', 2]).is_err(), "unknown flag");
    }
}
