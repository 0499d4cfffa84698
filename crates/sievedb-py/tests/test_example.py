"""The example script runs (small, without the plot) and reports every policy."""

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
