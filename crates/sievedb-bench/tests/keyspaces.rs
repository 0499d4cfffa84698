//! `--keyspaces N`: every engine of this build that has keyspaces (sievedb,
//! RocksDB's column families, fjall's keyspaces) writes key i into keyspace
//! `ks{i mod N}` and reads it back from there; LevelDB is skipped; one
//! keyspace is the run of before.

use serde_json::Value;
use sievedb_bench::engines::EngineKind;
mod common;

use common::{json_lines, results, run};
use sievedb_bench::{run_with_output, BenchArgs, EngineChoice};

const NUM: u64 = 3000;
const READS: u64 = 1500;
const KEYSPACES: usize = 3;

fn choice(kind: EngineKind) -> EngineChoice {
    match kind {
        EngineKind::Sievedb => EngineChoice::Sievedb,
        EngineKind::Leveldb => EngineChoice::Leveldb,
        EngineKind::Rocksdb => EngineChoice::Rocksdb,
        EngineKind::Fjall => EngineChoice::Fjall,
    }
}

/// A tiny run with buffers small enough that every keyspace reaches table
/// files and compactions.
fn tiny(engine: EngineChoice, keyspaces: usize, benchmarks: &str, json: bool) -> BenchArgs {
    BenchArgs {
        engine,
        num: NUM,
        reads: READS,
        keyspaces,
        write_buffer_size: 16 << 10,
        target_file_size: 8 << 10,
        benchmarks: benchmarks.into(),
        json,
        ..BenchArgs::default()
    }
}

/// Every lookup of a written key finds it (a key looked up in another
/// keyspace than its own would miss: about 2/3 of them with 3 keyspaces),
/// no missing key is found, every merge is in its counter, and a scan of
/// every keyspace meets each entry once.
#[test]
fn every_engine_with_keyspaces_reads_back_from_the_keyspace_it_wrote() {
    let mut scanned = None;
    for kind in EngineKind::built()
        .into_iter()
        .filter(|k| k.supports_keyspaces())
    {
        let e = kind.name();
        let lines = json_lines(&tiny(
            choice(kind),
            KEYSPACES,
            "fillrandom,readrandom,readmissing,mergerandom,waitforcompaction,readrandom,readseq",
            true,
        ));
        for l in lines.iter().filter(|l| l["type"] == "result") {
            assert_eq!(l["keyspaces"], KEYSPACES, "{l}");
        }
        let fill = results(&lines, e, "fillrandom");
        assert_eq!(fill[0]["ops"], NUM, "{e}");
        let reads = results(&lines, e, "readrandom");
        assert_eq!(reads.len(), 2, "{e}");
        for r in reads {
            assert_eq!(
                (&r["ops"], &r["found"]),
                (&READS.into(), &READS.into()),
                "{e}: {r}"
            );
        }
        assert_eq!(results(&lines, e, "readmissing")[0]["found"], 0, "{e}");
        let seq = results(&lines, e, "readseq")[0]["found"].as_u64().unwrap();
        let merged = results(&lines, e, "mergerandom");
        if kind == EngineKind::Fjall {
            assert!(merged.is_empty());
            let skipped: Vec<&Value> = lines.iter().filter(|l| l["type"] == "skipped").collect();
            assert_eq!(skipped.len(), 1, "{skipped:?}");
            assert_eq!(skipped[0]["reason"], "fjall has no merge operator");
            assert_eq!(seq, NUM);
        } else {
            assert_eq!(merged[0]["merges_checked"], NUM, "{e}");
            assert_eq!(merged[0]["counters_checked"], NUM, "{e}");
            // The counters are in the scan too, the same number on every engine.
            assert!(seq > NUM + NUM / 2 && seq < 2 * NUM, "{e}: {seq}");
            assert_eq!(*scanned.get_or_insert(seq), seq, "{e}");
        }
        // The settings name the keyspaces (sievedb's, RocksDB's column
        // families, fjall's keyspaces).
        let settings = &results(&lines, e, "fillrandom")[0]["settings"];
        let named = ["keyspaces", "column_families"]
            .iter()
            .filter_map(|k| settings[*k].as_str())
            .any(|s| s.starts_with("3 (ks0..ks2)"));
        assert!(named, "{e}: {settings}");
    }
}

/// `--keyspaces` in the text report: a header line, and LevelDB (no column
/// families) skipped per benchmark with the reason.
#[test]
fn text_report_names_the_keyspaces_and_skips_engines_without_them() {
    let text = run(&tiny(
        EngineChoice::All,
        KEYSPACES,
        "fillrandom,readrandom",
        false,
    ));
    assert!(
        text.contains("Keyspaces:  3 (ks0..ks2; key and counter i in ks(i mod 3))"),
        "{text}"
    );
    if EngineKind::Leveldb.available() {
        for bench in ["fillrandom", "readrandom"] {
            let line = text
                .lines()
                .find(|l| l.starts_with("leveldb") && l.contains(&format!("{bench:<12} :")))
                .unwrap_or_else(|| panic!("no leveldb {bench} line in:\n{text}"));
            assert!(
                line.ends_with(
                    "skipped (leveldb has no keyspaces or column families for --keyspaces 3)"
                ),
                "{line}"
            );
        }
    }
    for kind in EngineKind::built()
        .into_iter()
        .filter(|k| k.supports_keyspaces())
    {
        let several = EngineKind::built().len() > 1;
        assert!(
            text.lines()
                .any(|l| (!several || l.starts_with(kind.name()))
                    && l.contains("readrandom   :")
                    && l.contains(&format!("({READS} of {READS} found)"))),
            "{}: {text}",
            kind.name()
        );
    }
}

/// LevelDB alone with several keyspaces: every benchmark skipped, in JSON too.
#[test]
fn leveldb_alone_is_skipped_with_several_keyspaces() {
    assert!(!EngineKind::Leveldb.supports_keyspaces());
    if !EngineKind::Leveldb.available() {
        return;
    }
    let lines = json_lines(&tiny(
        EngineChoice::Leveldb,
        2,
        "fillrandom,readrandom,mergerandom",
        true,
    ));
    assert_eq!(lines.len(), 3, "{lines:?}");
    for (l, bench) in lines
        .iter()
        .zip(["fillrandom", "readrandom", "mergerandom"])
    {
        assert_eq!(l["type"], "skipped");
        assert_eq!(l["benchmark"], bench);
        assert_eq!(l["keyspaces"], 2);
        assert_eq!(
            l["reason"],
            "leveldb has no keyspaces or column families for --keyspaces 2"
        );
    }
}

/// One keyspace (the default) is the run of before: no header line, every
/// engine runs, and the JSON lines record `keyspaces: 1`.
#[test]
fn one_keyspace_is_the_default_keyspace() {
    assert_eq!(BenchArgs::default().keyspaces, 1);
    let text = run(&tiny(EngineChoice::All, 1, "fillrandom,readrandom", false));
    assert!(!text.contains("Keyspaces"), "{text}");
    assert!(!text.contains("skipped"), "{text}");
    let lines = json_lines(&tiny(EngineChoice::All, 1, "fillrandom,readrandom", true));
    for kind in EngineKind::built() {
        let r = results(&lines, kind.name(), "readrandom");
        assert_eq!(
            (&r[0]["found"], &r[0]["keyspaces"]),
            (&READS.into(), &1.into())
        );
    }
    let bad = BenchArgs {
        keyspaces: 0,
        ..BenchArgs::default()
    };
    let e = run_with_output(&bad, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("--keyspaces"), "{e}");
}

/// sievedb with `--keyspaces 3`: the reads find every key, the counters hold
/// every merge, `filterprobe` (the default keyspace's filters) is skipped,
/// and the database holds the data in keyspaces `ks0..ks2`: fill key i and
/// counter i in `ks{i mod 3}` only, nothing in the default keyspace.
#[test]
fn sievedb_writes_land_in_three_keyspaces() {
    let dir = tempfile::tempdir().unwrap();
    let args = BenchArgs {
        db: Some(dir.path().to_path_buf()),
        ..tiny(
            EngineChoice::Sievedb,
            KEYSPACES,
            "fillrandom,readrandom,mergerandom,filterprobe",
            true,
        )
    };
    let lines = json_lines(&args);
    let rr = results(&lines, "sievedb", "readrandom");
    assert_eq!(
        (&rr[0]["found"], &rr[0]["keyspaces"]),
        (&READS.into(), &3.into())
    );
    let merged = results(&lines, "sievedb", "mergerandom");
    assert_eq!(merged[0]["merges_checked"], NUM);
    assert_eq!(merged[0]["settings"]["merge_operator"], "u64add");
    let skipped: Vec<&Value> = lines.iter().filter(|l| l["type"] == "skipped").collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0]["benchmark"], "filterprobe");

    // The counters have merge operands: read them with the bench's operator.
    let opts = sievedb::Options::builder()
        .merge_operator(std::sync::Arc::new(sievedb::merge::U64Add))
        .build();
    let db = sievedb::Db::open(dir.path().join("sievedb"), opts).unwrap();
    assert_eq!(db.list_keyspaces(), ["default", "ks0", "ks1", "ks2"]);
    assert_eq!(
        db.iter().unwrap().count(),
        0,
        "the default keyspace is empty"
    );
    let keys = sievedb_bench::workload::keys::KeyGen::new(args.key_size, NUM).unwrap();
    let values = sievedb_bench::workload::keys::ValueGen::new(args.value_size, args.seed);
    let keyspaces: Vec<sievedb::Keyspace> = (0..KEYSPACES)
        .map(|ks| db.keyspace(&format!("ks{ks}")).unwrap())
        .collect();
    for i in 0..NUM {
        let own = (i % KEYSPACES as u64) as usize;
        for (ks, keyspace) in keyspaces.iter().enumerate() {
            let v = keyspace.get(keys.key(i, false)).unwrap();
            assert_eq!(
                v.as_deref(),
                (ks == own).then(|| values.value(i)),
                "key {i} in ks{ks}"
            );
            let counter = keyspace.get(keys.counter_key(i)).unwrap();
            assert!(ks == own || counter.is_none(), "counter {i} in ks{ks}");
        }
    }
    // Each keyspace holds its third of the fill's keys, and counters (keys
    // starting with 'm') only of its own residue.
    let mut counters = 0;
    for (ks, keyspace) in keyspaces.iter().enumerate() {
        let (mut fills, mut own_counters) = (0u64, 0u64);
        for item in keyspace.iter().unwrap() {
            let (k, v) = item.unwrap();
            if k[0] == b'm' {
                let i: u64 = std::str::from_utf8(&k[1..])
                    .unwrap()
                    .trim_end_matches(|c: char| !c.is_ascii_digit())
                    .parse()
                    .unwrap();
                assert_eq!(i % KEYSPACES as u64, ks as u64);
                assert!(u64::from_le_bytes(v.try_into().unwrap()) >= 1);
                own_counters += 1;
            } else {
                fills += 1;
            }
        }
        assert_eq!(fills, NUM / KEYSPACES as u64, "ks{ks}");
        assert!(own_counters > NUM / 6, "ks{ks}: {own_counters} counters");
        counters += own_counters;
    }
    assert!(counters > NUM / 2 && counters < NUM, "{counters}");
}
