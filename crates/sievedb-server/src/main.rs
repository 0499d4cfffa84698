//! The `sievedb-server` binary.
fn main() {
    eprintln!("sievedb-server: under construction");
    std::process::exit(2);
}
