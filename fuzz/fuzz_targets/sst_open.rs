#![no_main]
//! SST open: any file contents give an error or a readable table, never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sievedb_fuzz::exercise_sst(data));
