#!/bin/bash
# Writes tests/data/pre-keyspaces with the `sievedb` CLI of a release before
# keyspaces (commit 51ec95f): SSTs from two puts and a delete (each command
# opens the database, which flushes the WAL it finds), then 300 puts in one
# shell session, left in the WAL. Usage: make-pre-keyspaces.sh SIEVEDB_BINARY
set -euo pipefail
bin=$1
out=$(dirname "$0")/pre-keyspaces
rm -rf "$out"
"$bin" put --db "$out" first 1
"$bin" put --db "$out" gone x
"$bin" put --db "$out" second 2
"$bin" delete --db "$out" gone
for i in $(seq 0 299); do printf 'put wal%04d v%d\n' "$i" "$i"; done | "$bin" shell --db "$out" >/dev/null
rm -f "$out/LOCK"
ls -l "$out"
