//! Tests of the filter settings: names and ids, hash aliases, probe counts.

use super::*;

#[test]
fn names_round_trip() {
    for &f in HashFn::ALL {
        assert_eq!(f.to_string().parse::<HashFn>().unwrap(), f);
        assert_eq!(HashFn::from_id(f.id()), Some(f));
    }
    for &s in IndexScheme::ALL {
        assert_eq!(s.to_string().parse::<IndexScheme>().unwrap(), s);
        assert_eq!(IndexScheme::from_id(s.id()), Some(s));
    }
    for &s in HashSharing::ALL {
        assert_eq!(s.to_string().parse::<HashSharing>().unwrap(), s);
    }
    for &l in FilterLayout::ALL {
        assert_eq!(l.to_string().parse::<FilterLayout>().unwrap(), l);
        assert_eq!(FilterLayout::from_id(l.id()), Some(l));
    }
    // The ids files store: pinned (files of ids 1-7 decode unchanged; 5, the
    // standard wide Ribbon, is no longer written and reads as `Ribbon`).
    let ids: Vec<(FilterLayout, u8)> = FilterLayout::ALL.iter().map(|&l| (l, l.id())).collect();
    assert_eq!(
        ids,
        [
            (FilterLayout::Bloom, 1),
            (FilterLayout::Blocked, 2),
            (FilterLayout::Units, 3),
            (FilterLayout::Ribbon, 7),
            (FilterLayout::Ribbon64, 4),
            (FilterLayout::RibbonUnits, 6),
        ]
    );
    assert_eq!(FilterLayout::from_id(0), None);
    assert_eq!(FilterLayout::from_id(5), Some(FilterLayout::Ribbon));
    assert_eq!(FilterLayout::from_id(8), None);
    let family: Vec<FilterLayout> = FilterLayout::ALL
        .iter()
        .copied()
        .filter(|l| l.is_ribbon_family())
        .collect();
    assert_eq!(
        family,
        [
            FilterLayout::Ribbon,
            FilterLayout::Ribbon64,
            FilterLayout::RibbonUnits
        ]
    );
    assert!(!FilterLayout::RibbonUnits.is_ribbon());
    assert!(FilterLayout::Ribbon64.is_ribbon() && FilterLayout::Ribbon.is_ribbon());
    for &u in UnitHashing::ALL {
        assert_eq!(u.to_string().parse::<UnitHashing>().unwrap(), u);
        assert_eq!(UnitHashing::from_id(u.id()), Some(u));
    }
    let names: Vec<String> = HashFn::ALL.iter().map(|f| f.to_string()).collect();
    assert_eq!(
        names,
        [
            "murmur64a",
            "xxh3",
            "xxh64",
            "murmur3",
            "crc32c",
            "city64",
            "md5",
            "sha256"
        ]
    );
    assert_eq!(
        "enhanced-double".parse::<IndexScheme>().unwrap(),
        IndexScheme::EnhancedDouble
    );
    assert_eq!("SHA256".parse::<HashFn>().unwrap(), HashFn::Sha256);
    let e = "blake3".parse::<HashFn>().unwrap_err().to_string();
    assert!(e.contains("murmur64a"), "{e}");
    assert_eq!(HashSharing::default(), HashSharing::Levels);
}

#[test]
fn hash_aliases_are_the_papers_table_names() {
    for (alias, f) in [
        ("mm64", HashFn::Murmur64A),
        ("MM64", HashFn::Murmur64A),
        ("xx", HashFn::Xxh64),
        ("crc", HashFn::Crc32c),
        ("city", HashFn::City64),
    ] {
        assert_eq!(alias.parse::<HashFn>().unwrap(), f, "{alias}");
    }
    // Aliases never shadow a name, and are listed in the error of an unknown name.
    for (alias, _) in HashFn::ALIASES {
        assert!(HashFn::ALL.iter().all(|f| f.name() != *alias));
    }
    let e = "blake3".parse::<HashFn>().unwrap_err().to_string();
    assert!(
        e.contains("aliases: mm64 = murmur64a, xx = xxh64, crc = crc32c, city = city64"),
        "{e}"
    );
    assert!(IndexScheme::ALIASES.is_empty());
    let e = "x".parse::<IndexScheme>().unwrap_err().to_string();
    assert!(!e.contains("aliases"), "{e}");
}

#[test]
fn probes() {
    let mut o = FilterOptions::default();
    assert_eq!(o.probes_per_unit(), 7);
    o.leveldb_probes = true;
    assert_eq!(o.probes_per_unit(), 6); // ⌊6.9⌋
    o.bits_per_key = 1.0;
    assert_eq!(o.probes_per_unit(), 1);
    o.bits_per_key = 100.0;
    assert_eq!(o.probes_per_unit(), 30);
    o.leveldb_probes = false;
    o.bits_per_key = 10.0;
    o.layout = FilterLayout::Units;
    assert_eq!(o.effective_units(), 7);
    assert_eq!(o.probes_per_unit(), 1);
    o.num_probes = Some(10);
    assert!(o.validate().is_err());
    o.num_probes = Some(9);
    assert!(o.validate().is_ok());
    o.units = 0;
    assert!(o.validate().is_err());
    o = FilterOptions {
        sharing: HashSharing::None,
        ..FilterOptions::default()
    };
    assert_eq!(o.effective_scheme(), IndexScheme::Independent);
    o.bits_per_key = f64::NAN;
    assert!(o.validate().is_err());
}
