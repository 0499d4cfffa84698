//! Links the system LevelDB library when the `leveldb` feature is enabled, and
//! warns when the `rocksdb` feature would compile RocksDB from source.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_LEVELDB");
    println!("cargo:rerun-if-env-changed=ROCKSDB_LIB_DIR");
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
