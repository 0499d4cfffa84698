//! Links the system LevelDB library when the `leveldb` feature is enabled,
//! warns when the `rocksdb` feature would compile RocksDB from source, and
//! passes the version of the RocksDB headers the bindings are built against
//! to the crate (`SIEVEDB_ROCKSDB_HEADER_VERSION`, `unknown` when not found).

use std::path::Path;

/// `MAJOR.MINOR.PATCH` from RocksDB's `rocksdb/version.h` under `include`
/// (its `#define ROCKSDB_MAJOR 7` lines), if all three are there.
fn rocksdb_header_version(include: &Path) -> Option<String> {
    let header = include.join("rocksdb").join("version.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let text = std::fs::read_to_string(header).ok()?;
    let part = |name: &str| -> Option<u32> {
        text.lines().find_map(|l| {
            let mut words = l.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("#define"), Some(n), Some(v)) if n == name => v.parse().ok(),
                _ => None,
            }
        })
    };
    Some(format!(
        "{}.{}.{}",
        part("ROCKSDB_MAJOR")?,
        part("ROCKSDB_MINOR")?,
        part("ROCKSDB_PATCH")?
    ))
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_LEVELDB");
    println!("cargo:rerun-if-env-changed=ROCKSDB_LIB_DIR");
    println!("cargo:rerun-if-env-changed=ROCKSDB_INCLUDE_DIR");
    let include = std::env::var_os("ROCKSDB_INCLUDE_DIR").unwrap_or_else(|| "/usr/include".into());
    let version = rocksdb_header_version(Path::new(&include)).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SIEVEDB_ROCKSDB_HEADER_VERSION={version}");
    if std::env::var_os("CARGO_FEATURE_LEVELDB").is_some() {
        println!("cargo:rustc-link-lib=leveldb");
    }
    // librocksdb-sys reads ROCKSDB_LIB_DIR (set by the workspace's .cargo/config.toml).
    if std::env::var_os("CARGO_FEATURE_ROCKSDB").is_some()
        && std::env::var_os("ROCKSDB_LIB_DIR").is_none()
    {
        println!(
            "cargo:warning=ROCKSDB_LIB_DIR is not set: librocksdb-sys compiles RocksDB from \
             source (a long C++ build); install librocksdb-dev and build inside the workspace so \
             that .cargo/config.toml applies"
        );
    }
}
