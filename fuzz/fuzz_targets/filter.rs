#![no_main]
//! Filter decoding and probing: any section or filter-index bytes decode to an
//! error or a filter that answers probes without panicking; and a filter of
//! every layout (Ribbon included) built over keys cut from the input decodes
//! back to itself and finds every key, and a partitioned filter's index over
//! them decodes to its partitions.
use libfuzzer_sys::fuzz_target;
use sievedb::filter::partitioned::{Part, PartitionIndex, PartitionedBuilder};
use sievedb::filter::{Filter, FilterBuilder, FilterIndex, KeyDigest, KeyProbe};
use sievedb::{FilterLayout, FilterOptions, HashSharing};

fn probe(f: &Filter, data: &[u8]) {
    for key in [&b""[..], b"a", b"key000123", &data[..data.len().min(40)]] {
        let mut p = KeyProbe::new(key, HashSharing::Levels);
        let _ = f.may_contain(&mut p);
        let _ = f.may_contain_digest(&KeyDigest::compute(f.hash_fn(), key));
    }
    let _ = (f.memory_bytes(), f.theoretical_fpr());
}

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = Filter::decode(data) {
        probe(&f, data);
    }
    if let Ok((index, whole)) = FilterIndex::decode(data, 0, data.len() as u64) {
        probe(index.empty(), data);
        let _ = index.fpr(1);
        if let Some(f) = whole {
            probe(&f, data);
        }
    }

    // Round trip of a built filter; the first bytes choose layout and size.
    let (Some(&sel), Some(&bits)) = (data.first(), data.get(1)) else {
        return;
    };
    let layout = FilterLayout::ALL[usize::from(sel) % FilterLayout::ALL.len()];
    let opts = FilterOptions {
        layout,
        bits_per_key: f64::from(bits % 40) / 2.0 + 0.5,
        units: u32::from(sel % 4) + 1,
        ..FilterOptions::default()
    };
    let mut keys: Vec<&[u8]> = data[2..].chunks(3).take(300).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut b = FilterBuilder::new(&opts);
    for k in &keys {
        b.add(k);
    }
    let built = b.build();
    let bytes = built.encode();
    let f = Filter::decode(&bytes).expect("a built filter decodes");
    assert!(f == built, "decode(encode(f)) == f");
    assert!(f.layout() == layout || layout.is_ribbon_family());
    for k in &keys {
        assert!(f.may_contain(&mut KeyProbe::new(k, HashSharing::Levels)));
    }

    // A partitioned filter's index over the same keys decodes to its parts.
    if layout.is_units() || keys.is_empty() {
        return;
    }
    let mut pb = PartitionedBuilder::new(&opts, u64::from(bits % 8 + 1) * 64);
    for k in &keys {
        pb.add(k);
    }
    let built = pb.finish();
    let parts: Vec<Part> = built
        .iter()
        .enumerate()
        .map(|(i, (last, keys, _))| Part {
            last: last.clone(),
            keys: *keys,
            offset: i as u64 * 4096,
            size: 100,
        })
        .collect();
    let index = PartitionIndex::encode(&built[0].2, keys.len() as u64, &parts);
    let (decoded, whole) = FilterIndex::decode(&index, 0, index.len() as u64).expect("decodes");
    assert!(whole.is_none());
    assert!(decoded.partitions().map(|p| p.parts()) == Some(&parts[..]));
});
