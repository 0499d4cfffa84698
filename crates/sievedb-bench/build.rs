//! Links the system LevelDB library when the `leveldb` feature is enabled.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_LEVELDB");
    if std::env::var_os("CARGO_FEATURE_LEVELDB").is_some() {
        println!("cargo:rustc-link-lib=leveldb");
    }
}
