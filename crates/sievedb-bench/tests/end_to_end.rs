//! Tiny end-to-end runs of the whole benchmark, parsing its JSON output.

use serde_json::Value;
use sievedb_bench::engines::{EngineConfig, EngineKind};
use sievedb_bench::workload::keys::{KeyGen, ValueGen};
use sievedb_bench::{run_with_output, BenchArgs, EngineChoice};

const NUM: u64 = 2000;
const READS: u64 = 1000;

fn tiny(engine: EngineChoice) -> BenchArgs {
    BenchArgs {
        engine,
        num: NUM,
        reads: READS,
        // Small buffers so that even 2000 entries reach table files and filters.
        write_buffer_size: 64 << 10,
        target_file_size: 32 << 10,
        json: true,
        ..BenchArgs::default()
    }
}

fn run_json(args: &BenchArgs) -> Vec<Value> {
    let mut out = Vec::new();
    run_with_output(args, &mut out).expect("benchmark run failed");
    String::from_utf8(out)
        .expect("utf-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON {l:?}: {e}")))
        .collect()
}

fn result<'a>(lines: &'a [Value], engine: &str, bench: &str) -> &'a Value {
    lines
        .iter()
        .find(|v| v["type"] == "result" && v["engine"] == engine && v["benchmark"] == bench)
        .unwrap_or_else(|| panic!("no {engine} {bench} result in {lines:?}"))
}

fn check_engine(lines: &[Value], engine: &str) {
    for bench in [
        "fillseq",
        "fillrandom",
        "readrandom",
        "readmissing",
        "readseq",
    ] {
        let r = result(lines, engine, bench);
        for field in [
            "ops",
            "seconds",
            "ops_per_sec",
            "micros_per_op",
            "mb_per_sec",
        ] {
            assert!(r[field].is_number(), "{engine} {bench} {field}: {r}");
        }
        assert!(r.get("found").is_some() && r.get("stats").is_some());
        assert_eq!(r["settings"]["engine"], engine);
        assert_eq!(r["settings"]["compression"], "none");
        assert_eq!(r["settings"]["verify_checksums"], true);
        assert_eq!(r["settings"]["sync"], false);
        // The workload travels with every result, so a line can be rerun.
        let w = &r["workload"];
        assert_eq!(w["num"], NUM, "{engine} {bench}: {w}");
        assert_eq!(w["reads"], READS);
        assert!(w["seed"].is_u64() && w["distribution"].is_string(), "{w}");
    }
    assert_eq!(result(lines, engine, "fillrandom")["ops"], NUM);
    assert!(result(lines, engine, "fillrandom")["found"].is_null());
    let rr = result(lines, engine, "readrandom");
    assert_eq!(rr["ops"], READS);
    assert_eq!(rr["found"], READS);
    let rm = result(lines, engine, "readmissing");
    assert_eq!(rm["ops"], READS);
    assert_eq!(rm["found"], 0);
    let rs = result(lines, engine, "readseq");
    assert_eq!(rs["ops"], NUM);
    assert_eq!(rs["found"], NUM);
}

#[test]
fn tiny_run_on_sievedb() {
    let lines = run_json(&tiny(EngineChoice::Sievedb));
    assert_eq!(
        lines.len(),
        5,
        "one line per benchmark, no medians for one run"
    );
    check_engine(&lines, "sievedb");
    // The stats are the benchmark's own work.
    let fill = &result(&lines, "sievedb", "fillrandom")["stats"];
    assert_eq!(fill["puts"], NUM);
    assert_eq!(fill["gets"], 0);
    let rr = &result(&lines, "sievedb", "readrandom")["stats"];
    assert_eq!(rr["gets"], READS);
    assert_eq!(rr["puts"], 0);
    let rm = &result(&lines, "sievedb", "readmissing")["stats"];
    assert_eq!(rm["gets"], READS);
    assert!(
        rm["filter_negatives"].as_u64().unwrap() > 0,
        "missing keys must hit filters: {rm}"
    );
}

#[test]
fn repeats_give_medians_and_text_report() {
    let args = BenchArgs {
        benchmarks: "fillrandom,readrandom".into(),
        repeats: 2,
        json: false,
        threads: 2,
        ..tiny(EngineChoice::Sievedb)
    };
    let mut out = Vec::new();
    run_with_output(&args, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("sievedb settings:"), "{text}");
    assert!(text.contains("Medians over 2 repeat(s)"), "{text}");
    assert!(text.contains("micros/op;"), "{text}");
    assert!(
        text.contains(&format!("({READS} of {READS} found)")),
        "{text}"
    );

    let lines = run_json(&BenchArgs { json: true, ..args });
    let medians: Vec<&Value> = lines.iter().filter(|v| v["type"] == "median").collect();
    assert_eq!(medians.len(), 2);
    assert!(medians
        .iter()
        .all(|m| m["repeats"] == 2 && m["ratio_to_sievedb"] == 1.0));
}

#[test]
fn existing_db_is_reused_with_db_dir() {
    let dir = tempfile::tempdir().unwrap();
    let fill = BenchArgs {
        db: Some(dir.path().to_path_buf()),
        benchmarks: "fillseq".into(),
        ..tiny(EngineChoice::Sievedb)
    };
    run_json(&fill);
    assert!(dir.path().join("sievedb").join("CURRENT").exists());
    let read = BenchArgs {
        benchmarks: "fillrandom,readrandom,readmissing,readseq".into(),
        use_existing_db: true,
        ..fill
    };
    let lines = run_json(&read);
    assert_eq!(lines[0]["type"], "skipped");
    assert_eq!(result(&lines, "sievedb", "readrandom")["found"], READS);
    assert_eq!(result(&lines, "sievedb", "readmissing")["found"], 0);
    assert_eq!(result(&lines, "sievedb", "readseq")["ops"], NUM);
}

/// Every engine in this build stores exactly the generated values.
#[test]
fn engines_store_generated_values() {
    let keys = KeyGen::new(16, 500).unwrap();
    let values = ValueGen::new(100, 301);
    let cfg = BenchArgs::default().engine_config();
    for kind in EngineKind::built() {
        let dir = tempfile::tempdir().unwrap();
        let engine = kind.open(&dir.path().join(kind.name()), &cfg).unwrap();
        for i in 0..500 {
            let k = keys.key(i, false);
            if i % 2 == 0 {
                engine.put(&k, values.value(i)).unwrap();
            } else {
                engine.write_batch(&[(&k, values.value(i))]).unwrap();
            }
        }
        engine.flush().unwrap();
        for i in 0..500 {
            assert_eq!(
                engine.get(&keys.key(i, false)).unwrap().as_deref(),
                Some(values.value(i))
            );
            assert_eq!(engine.get_len(&keys.key(i, false)).unwrap(), Some(100));
            assert_eq!(engine.get(&keys.key(i, true)).unwrap(), None);
        }
        assert_eq!(engine.scan_all().unwrap(), 500);
        assert_eq!(engine.settings()["engine"], kind.name());
        let _: &EngineConfig = &cfg;
    }
}

#[cfg(feature = "leveldb")]
#[test]
fn tiny_run_on_leveldb() {
    let lines = run_json(&tiny(EngineChoice::Leveldb));
    check_engine(&lines, "leveldb");
    assert!(result(&lines, "leveldb", "readrandom")["stats"].is_null());
}

#[cfg(feature = "rocksdb")]
#[test]
fn tiny_run_on_rocksdb() {
    let lines = run_json(&tiny(EngineChoice::Rocksdb));
    check_engine(&lines, "rocksdb");
    let settings = &result(&lines, "rocksdb", "readrandom")["settings"];
    assert!(
        settings["version"]
            .as_str()
            .unwrap()
            .starts_with(char::is_numeric),
        "{settings}"
    );
    assert_eq!(settings["write_buffer_size"], 64 << 10);
    assert_eq!(settings["target_file_size"], 32 << 10);
    assert_eq!(settings["bits_per_key"], 10.0);
}

#[cfg(feature = "fjall")]
#[test]
fn tiny_run_on_fjall() {
    let lines = run_json(&tiny(EngineChoice::Fjall));
    check_engine(&lines, "fjall");
    let settings = &result(&lines, "fjall", "readrandom")["settings"];
    assert_eq!(settings["write_buffer_size"], 64 << 10);
    assert_eq!(settings["target_file_size"], 32 << 10);
    assert_eq!(settings["bits_per_key"], 10.0);
    assert_eq!(settings["version"], "3.1.13");
    // Level 1 holds four target-size files in fjall, whatever --level1-size says.
    assert_eq!(settings["level1_size"], 4 * (32 << 10));
}

/// The database directories of every engine can be emptied, refilled and
/// reopened with `--db`, which need not exist yet (LevelDB and RocksDB create
/// only the last component of a path).
#[test]
fn every_engine_refills_its_db_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("not-yet");
    let args = BenchArgs {
        db: Some(dir.clone()),
        benchmarks: "fillrandom,readseq".into(),
        ..tiny(EngineChoice::All)
    };
    for _ in 0..2 {
        let lines = run_json(&args);
        for kind in EngineKind::built() {
            assert_eq!(result(&lines, kind.name(), "readseq")["found"], NUM);
            assert!(dir.join(kind.name()).is_dir());
        }
    }
    // Reopened, every engine still finds exactly what was written.
    let lines = run_json(&BenchArgs {
        benchmarks: "readrandom,readmissing".into(),
        use_existing_db: true,
        ..args
    });
    for kind in EngineKind::built() {
        assert_eq!(result(&lines, kind.name(), "readrandom")["found"], READS);
        assert_eq!(result(&lines, kind.name(), "readmissing")["found"], 0);
    }
}

#[test]
fn tiny_run_on_all_engines_reports_ratios() {
    let lines = run_json(&BenchArgs {
        repeats: 1,
        ..tiny(EngineChoice::All)
    });
    let built = EngineKind::built();
    assert_eq!(built[0], EngineKind::Sievedb);
    for kind in &built {
        check_engine(&lines, kind.name());
    }
    for kind in &built[1..] {
        let ratio = lines
            .iter()
            .find(|v| {
                v["type"] == "median"
                    && v["engine"] == kind.name()
                    && v["benchmark"] == "readrandom"
            })
            .unwrap_or_else(|| panic!("no {} median row", kind.name()));
        assert!(ratio["ratio_to_sievedb"].as_f64().unwrap() > 0.0);
    }

    // The text report names every built engine, sievedb first.
    let mut out = Vec::new();
    run_with_output(
        &BenchArgs {
            benchmarks: "fillrandom".into(),
            json: false,
            ..tiny(EngineChoice::All)
        },
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let names: Vec<&str> = built.iter().map(|k| k.name()).collect();
    assert!(
        text.contains(&format!("Engines:    {}\n", names.join(", "))),
        "{text}"
    );
}

/// `--io-delay-ns`: every lookup of a settled tree without a block cache reads
/// a data block from a file, so readrandom lasts at least reads × delay.
#[test]
fn io_delay_slows_readrandom_down() {
    const DELAY_NS: u64 = 200_000;
    const FEW: u64 = 200;
    let args = |io_delay_ns| BenchArgs {
        benchmarks: "fillrandom,flush,readrandom".into(),
        reads: FEW,
        block_cache_size: 0,
        io_delay_ns,
        ..tiny(EngineChoice::Sievedb)
    };
    let plain = run_json(&args(0));
    let delayed = run_json(&args(DELAY_NS));
    let rr = result(&delayed, "sievedb", "readrandom");
    assert_eq!(rr["found"], FEW);
    assert_eq!(rr["settings"]["io_delay_ns"], DELAY_NS);
    assert!(
        rr["stats"]["block_cache_misses"].as_u64().unwrap() >= FEW,
        "{rr}"
    );
    let secs = rr["seconds"].as_f64().unwrap();
    assert!(
        secs >= (FEW * DELAY_NS) as f64 * 1e-9,
        "{secs} s for {FEW} reads"
    );
    let base = result(&plain, "sievedb", "readrandom")["seconds"]
        .as_f64()
        .unwrap();
    eprintln!(
        "readrandom: {base:.4} s without delay, {secs:.4} s with {DELAY_NS} ns (ratio {:.1})",
        secs / base
    );
}

/// `--use-direct-reads` reaches sievedb (or fails clearly where the file system
/// refuses O_DIRECT); every engine reports the device flags it honours.
#[test]
fn device_flags_reach_the_engines() {
    let args = BenchArgs {
        benchmarks: "fillrandom,flush,readrandom".into(),
        use_direct_reads: true,
        block_cache_size: 0,
        ..tiny(EngineChoice::Sievedb)
    };
    let mut out = Vec::new();
    match run_with_output(&args, &mut out) {
        Ok(()) => {
            let lines = run_json(&args);
            let rr = result(&lines, "sievedb", "readrandom");
            assert_eq!(rr["found"], READS);
            assert_eq!(rr["settings"]["use_direct_reads"], true);
            assert_eq!(rr["settings"]["file_access"], "O_DIRECT reads");
        }
        Err(e) => assert!(e.to_string().contains("O_DIRECT"), "{e}"),
    }
    let cfg = BenchArgs {
        use_direct_reads: true,
        io_delay_ns: 70,
        ..BenchArgs::default()
    }
    .engine_config();
    for kind in EngineKind::built() {
        let dir = tempfile::tempdir().unwrap();
        let engine = match kind.open(&dir.path().join(kind.name()), &cfg) {
            Ok(e) => e,
            Err(e) => {
                assert!(e.to_string().contains("O_DIRECT"), "{}: {e}", kind.name());
                continue;
            }
        };
        let s = engine.settings();
        let direct = matches!(kind, EngineKind::Sievedb | EngineKind::Rocksdb);
        assert_eq!(s["use_direct_reads"], direct, "{s}");
        if kind == EngineKind::Sievedb {
            assert_eq!(s["io_delay_ns"], 70);
            continue;
        }
        assert_eq!(s["io_delay_ns"], 0, "{s}");
        let ignored: Vec<&str> = s["ignored_flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut want = vec!["--io-delay-ns"];
        if !direct {
            want.insert(0, "--use-direct-reads");
        }
        assert_eq!(ignored, want, "{}", kind.name());
    }
}

/// `readwhilewriting`, `ycsba` and `ycsbb` on a small sievedb database.
#[test]
fn read_while_writing_and_ycsb_on_sievedb() {
    const N: u64 = 3000;
    const OPS: u64 = 2000;
    let args = BenchArgs {
        num: N,
        reads: OPS,
        threads: 2,
        benchmarks: "fillrandom,readwhilewriting,ycsba,ycsbb".into(),
        distribution: sievedb_bench::bench::KeyDistribution::Zipfian,
        ..tiny(EngineChoice::Sievedb)
    };
    let lines = run_json(&args);

    let rww = result(&lines, "sievedb", "readwhilewriting");
    assert_eq!(rww["ops"], OPS, "{rww}");
    assert_eq!(rww["found"], OPS, "every key exists: {rww}");
    assert_eq!(rww["threads"], 2);
    let writes = rww["writer_ops"].as_u64().unwrap();
    assert!(writes > 0, "{rww}");
    assert!(rww["writer_ops_per_sec"].as_f64().unwrap() > 0.0);
    assert_eq!(rww["stats"]["gets"], OPS);
    assert_eq!(rww["stats"]["puts"], writes);
    assert!(rww["stats_samples"].as_u64().unwrap() >= 2, "{rww}");
    assert!(
        rww["filter_memory_max_bytes"].as_u64().unwrap() > 0,
        "{rww}"
    );
    assert!(
        rww["filter_memory_max_over_budget_bytes"].is_null(),
        "{rww}"
    );
    assert!(rww["duration_secs"].is_null());

    for (bench, read_share) in [("ycsba", 0.5), ("ycsbb", 0.95)] {
        let r = result(&lines, "sievedb", bench);
        assert_eq!(r["ops"], OPS, "{r}");
        assert_eq!(
            r["threads"], 2,
            "the YCSB workloads run on --threads threads: {r}"
        );
        let (reads, updates) = (r["reads"].as_u64().unwrap(), r["updates"].as_u64().unwrap());
        assert_eq!(reads + updates, OPS, "{r}");
        assert_eq!(r["read_found"], reads);
        assert_eq!(r["found"], reads);
        let share = reads as f64 / OPS as f64;
        assert!((share - read_share).abs() < 0.05, "{bench}: {share}");
        assert_eq!(r["stats"]["gets"], reads);
        assert_eq!(r["stats"]["puts"], updates);
    }

    // The text report names the writer and the operation kinds.
    let mut out = Vec::new();
    run_with_output(
        &BenchArgs {
            json: false,
            ..args
        },
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line in {text}"))
            .to_string()
    };
    assert!(line("readwhilewriting").contains("writer "), "{text}");
    assert!(line("readwhilewriting").contains(&format!("({OPS} of {OPS} found)")));
    assert!(line("ycsba").contains("updates"), "{text}");
}

/// `--duration` runs readwhilewriting for that long whatever `--reads` says,
/// sampling the statistics all along.
#[test]
fn read_while_writing_for_a_duration() {
    let lines = run_json(&BenchArgs {
        benchmarks: "fillseq,readwhilewriting".into(),
        reads: 10,
        duration: 1,
        sample_interval_ms: 50,
        ..tiny(EngineChoice::Sievedb)
    });
    let rww = result(&lines, "sievedb", "readwhilewriting");
    assert!(rww["seconds"].as_f64().unwrap() >= 1.0, "{rww}");
    assert!(rww["ops"].as_u64().unwrap() > 10, "{rww}");
    assert_eq!(rww["found"], rww["ops"]);
    assert_eq!(rww["duration_secs"], 1.0);
    assert!(rww["stats_samples"].as_u64().unwrap() >= 10, "{rww}");

    // Without sampling, no peak is reported.
    let lines = run_json(&BenchArgs {
        benchmarks: "fillseq,readwhilewriting".into(),
        sample_interval_ms: 0,
        ..tiny(EngineChoice::Sievedb)
    });
    let rww = result(&lines, "sievedb", "readwhilewriting");
    assert!(rww["filter_memory_max_bytes"].is_null(), "{rww}");
    assert_eq!(rww["ops"], READS);
}

/// Every sievedb result line carries the filter counters at its top level,
/// equal to those of its `stats`.
#[test]
fn sievedb_results_carry_the_filter_keys() {
    let lines = run_json(&BenchArgs {
        benchmarks: "fillrandom,flush,readmissing,readwhilewriting,ycsbb".into(),
        filters: sievedb_bench::FilterArgs {
            filter: "units".parse().unwrap(),
            filter_units: 4,
            filter_memory_bytes: Some(1 << 20),
            ..sievedb_bench::FilterArgs::default()
        },
        ..tiny(EngineChoice::Sievedb)
    });
    let expected = [
        "filter_unit_loads",
        "filter_unit_reads",
        "table_open_reads",
        "filter_unit_evictions",
        "filter_memory_bytes",
        "filter_memory_budget_bytes",
        "data_block_reads",
        "digests_computed",
        "estimated_extra_io",
        "filter_false_positives",
    ];
    assert_eq!(sievedb_bench::report::FILTER_KEYS, expected);
    for r in lines.iter().filter(|v| v["type"] == "result") {
        let obj = r.as_object().unwrap();
        for key in expected {
            assert!(obj.contains_key(key), "{key} missing in {r}");
            assert_eq!(r[key], r["stats"][key], "{key}");
        }
    }
    let rm = result(&lines, "sievedb", "readmissing");
    assert!(rm["digests_computed"].as_u64().unwrap() > 0, "{rm}");
    assert!(rm["filter_memory_bytes"].as_u64().unwrap() > 0, "{rm}");
    assert_eq!(rm["settings"]["filter_memory"], "1048576 bytes");
    assert!(rm["settings"]["filter"]
        .as_str()
        .unwrap()
        .contains("4 units"));
}

/// The new benchmarks run on every engine of this build (the sampler only
/// on sievedb, the one engine with statistics).
#[test]
fn read_while_writing_and_ycsb_on_every_engine() {
    let lines = run_json(&BenchArgs {
        benchmarks: "fillrandom,readwhilewriting,ycsba".into(),
        ..tiny(EngineChoice::All)
    });
    for kind in EngineKind::built() {
        let rww = result(&lines, kind.name(), "readwhilewriting");
        assert_eq!(rww["found"], READS, "{rww}");
        assert!(rww["writer_ops"].as_u64().unwrap() > 0);
        assert_eq!(
            rww["filter_memory_max_bytes"].is_null(),
            kind != EngineKind::Sievedb
        );
        let y = result(&lines, kind.name(), "ycsba");
        assert_eq!(y["read_found"], y["reads"], "{y}");
    }
}

/// db_bench's readwhilewriting on every engine, timed by `--duration`: the
/// readers' lookups all find their keys while one writer overwrites random
/// keys for the whole time, and the writer's own count and rate are reported.
#[test]
fn read_while_writing_for_a_duration_on_every_engine() {
    for threads in [1, 2] {
        let lines = run_json(&BenchArgs {
            benchmarks: "fillrandom,readwhilewriting".into(),
            duration: 1,
            threads,
            ..tiny(EngineChoice::All)
        });
        for kind in EngineKind::built() {
            let rww = result(&lines, kind.name(), "readwhilewriting");
            let seconds = rww["seconds"].as_f64().unwrap();
            assert!((1.0..30.0).contains(&seconds), "{rww}");
            assert_eq!(rww["threads"], threads, "{rww}");
            let ops = rww["ops"].as_u64().unwrap();
            assert!(ops > 0 && rww["found"] == ops, "{rww}");
            // The reported rate is the readers'.
            let rate = rww["ops_per_sec"].as_f64().unwrap();
            assert!((rate - ops as f64 / seconds).abs() <= 1e-6 * rate, "{rww}");
            // The writer wrote until the readers were done.
            let writes = rww["writer_ops"].as_u64().unwrap();
            let write_seconds = rww["writer_seconds"].as_f64().unwrap();
            assert!(writes > 0 && write_seconds >= seconds * 0.9, "{rww}");
            let write_rate = rww["writer_ops_per_sec"].as_f64().unwrap();
            assert!(
                (write_rate - writes as f64 / write_seconds).abs() <= 1e-6 * write_rate,
                "{rww}"
            );
        }
    }
}

/// A filter memory budget reaches sievedb; the baselines list it as ignored.
#[test]
fn filter_memory_flags_reach_the_engines() {
    let cfg = BenchArgs {
        filters: sievedb_bench::FilterArgs {
            filter_memory_bits_per_key: Some(3.5),
            ..sievedb_bench::FilterArgs::default()
        },
        ..BenchArgs::default()
    }
    .engine_config();
    for kind in EngineKind::built() {
        let dir = tempfile::tempdir().unwrap();
        let engine = kind.open(&dir.path().join(kind.name()), &cfg).unwrap();
        let s = engine.settings();
        if kind == EngineKind::Sievedb {
            assert_eq!(s["filter_memory"], "3.5 bits per key", "{s}");
            continue;
        }
        let ignored = s["ignored_flags"].as_array().unwrap();
        assert!(
            ignored.iter().any(|f| f == "--filter-memory-bits-per-key"),
            "{}: {s}",
            kind.name()
        );
    }
}

/// `--max-open-files` reaches every built engine (in its settings, as each
/// applies it), and a value sievedb cannot use is an error that names it.
#[test]
fn max_open_files_reaches_the_engines() {
    let cfg = BenchArgs {
        max_open_files: 2000,
        ..BenchArgs::default()
    }
    .engine_config();
    for kind in EngineKind::built() {
        let dir = tempfile::tempdir().unwrap();
        let engine = kind.open(&dir.path().join(kind.name()), &cfg).unwrap();
        assert_eq!(engine.settings()["max_open_files"], 2000, "{}", kind.name());
    }
    let args = BenchArgs {
        max_open_files: 8,
        ..tiny(EngineChoice::Sievedb)
    };
    let e = run_with_output(&args, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("max_open_files"), "{e}");
}

/// `--sync` (db_bench's): every engine says so in its settings, and sievedb
/// syncs each put: its WAL holds a sync mark (written at the start of the
/// first group commit after a completed sync) before every put but the first.
#[test]
fn sync_makes_every_engine_sync_each_write() {
    let cfg = BenchArgs {
        sync: true,
        ..BenchArgs::default()
    }
    .engine_config();
    for kind in EngineKind::built() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(kind.name());
        let engine = kind.open(&path, &cfg).unwrap();
        assert_eq!(engine.settings()["sync"], true, "{}", kind.name());
        if kind != EngineKind::Sievedb {
            continue;
        }
        for i in 0..50u32 {
            engine.put(&i.to_be_bytes(), b"value").unwrap();
        }
        drop(engine);
        let (mut puts, mut marks) = (0, 0);
        for entry in std::fs::read_dir(&path).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "log") {
                let data = std::fs::read(&p).unwrap();
                for r in sievedb::wal::read_records(&data, &p).unwrap().0 {
                    match sievedb::wal::sync_mark::parse(r) {
                        Some(_) => marks += 1,
                        None => puts += 1,
                    }
                }
            }
        }
        assert_eq!((puts, marks), (50, 49));
    }
}
