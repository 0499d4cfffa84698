//! Helpers shared by the end-to-end tests of the `sievedb` binary
//! (`cli_*.rs`): running it, reading its output, and shell sessions.

// Each test binary uses some of these helpers only.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub fn sievedb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sievedb"))
        .args(args)
        .output()
        .expect("run sievedb")
}

pub fn db_arg(dir: &Path) -> String {
    dir.to_str().expect("utf-8 temp path").to_string()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}, stderr: {}",
        o.status,
        stderr(o)
    );
    stdout(o)
}

/// Runs a shell session with `input` on stdin and returns its stdout lines.
pub fn shell(dir: &Path, extra: &[&str], input: &str) -> Vec<String> {
    let db = db_arg(dir);
    let mut args = vec!["shell", "--db", db.as_str()];
    args.extend_from_slice(extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_sievedb"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn shell");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write commands");
    drop(stdin);
    let out = child.wait_with_output().expect("wait shell");
    assert!(out.status.success(), "shell failed: {}", stderr(&out));
    stdout(&out).lines().map(str::to_string).collect()
}

/// Every file under `dir` (recursively) with its contents.
pub fn dir_state(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}
