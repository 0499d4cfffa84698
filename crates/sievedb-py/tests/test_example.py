"""The example scripts run (small, without plots) and report what they show."""

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "filter_policies.py"


def test_filter_policies_example(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--keys",
            "20000",
            "--lookups",
            "5000",
            "--policies",
            "uniform,monkey,elastic",
            "--dir",
            str(tmp_path),
            "--no-plot",
            "--json",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    results = json.loads(out)
    assert [r["policy"] for r in results] == ["uniform", "monkey", "elastic"]
    for r in results:
        assert 0 < r["found"] < r["lookups"]
        assert r["device_reads_per_lookup"] > 0
        assert r["filter_memory_bytes"] <= r["filter_memory_budget_bytes"]


KEYSPACES = EXAMPLE.parent / "keyspaces.py"


def test_keyspaces_example(tmp_path):
    out = subprocess.run(
        [sys.executable, str(KEYSPACES), "--dir", str(tmp_path), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    r = json.loads(out)
    assert r["keyspaces"] == ["by_email", "counters", "default", "sessions", "users"]
    assert r["index_at_snapshot"] == ["alice@example.com", "bob@example.com"]
    assert r["index_now"] == ["alice@example.com", "bob@example.org"]
    assert r["users_after_reopen"] == {"u1": "alice", "u2": "bob"}
    assert r["user_count"] == 2
    assert r["session"] == "u1"
    assert r["default_keyspace_keys"] == []
