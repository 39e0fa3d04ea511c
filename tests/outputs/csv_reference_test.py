#!/usr/bin/env python3
"""docs/results-files.md against the CSV files etwire writes: every column of every file's
header is in the file's table there, and every column the table lists is in the header.

    python3 tests/outputs/csv_reference_test.py --etwire build/release/etwire --source-dir . --case all

Cases:

  all   configs/twin-congestion.yaml with queue samples (collectives.csv, flows.csv, nodes.csv,
        ports.csv, qps.csv, queues.csv: every CSV file in its results) and a two-size sweep of configs/loopback-demo.yaml (sweep.csv).
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402


def documented_columns(path):
    """{file name: [columns]} from each "## `NAME.csv`" section's table: the backquoted names in
    its first column."""
    tables = {}
    current = None
    with open(path) as f:
        for line in f:
            heading = re.match(r"^## `([a-z_]+\.csv)`", line)
            if heading:
                current = tables.setdefault(heading.group(1), [])
                continue
            if line.startswith("## "):
                current = None
            if current is None or not line.startswith("| `"):
                continue
            first_cell = line.split("|")[1]
            current.extend(re.findall(r"`([A-Za-z_]+)`", first_cell))
    return tables


def header(path):
    with open(path) as f:
        return f.readline().rstrip("\n").split(",")


def case_all(args, work):
    run_out = os.path.join(work, "run")
    proc = subprocess.run(
        [args.etwire, "run", os.path.join(args.source_dir, "configs/twin-congestion.yaml"),
         "--set", "telemetry.record.queue_sample_interval=10us", "--no-metrics", "--no-progress",
         "--out", run_out], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    sweep_out = os.path.join(work, "sweep")
    proc = subprocess.run(
        [args.etwire, "sweep", os.path.join(args.source_dir, "configs/loopback-demo.yaml"),
         "-b", "64KiB", "-e", "128KiB", "-n", "1", "-w", "0", "--out", sweep_out],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    # Every CSV file the run wrote, so that a new one cannot go undocumented.
    files = {name: os.path.join(run_out, name) for name in os.listdir(run_out)
             if name.endswith(".csv")}
    assert {"collectives.csv", "flows.csv", "nodes.csv", "ports.csv", "qps.csv",
            "queues.csv"} <= set(files), sorted(files)
    files["sweep.csv"] = os.path.join(sweep_out, "sweep.csv")
    documented = documented_columns(os.path.join(args.source_dir, "docs/results-files.md"))
    assert sorted(documented) == sorted(files), ("files documented", sorted(documented))
    for name, path in files.items():
        written = header(path)
        listed = documented[name]
        assert len(set(listed)) == len(listed), (name, "listed twice", listed)
        missing = [c for c in written if c not in listed]
        extra = [c for c in listed if c not in written]
        assert not missing, f"{name}: columns with no entry in docs/results-files.md: {missing}"
        assert not extra, f"{name}: docs/results-files.md lists columns it does not have: {extra}"
    return ", ".join(f"{name} {len(documented[name])} columns" for name in sorted(files))


if __name__ == "__main__":
    sys.exit(run_case({"all": case_all}, "csv-reference"))
