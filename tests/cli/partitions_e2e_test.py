#!/usr/bin/env python3
"""End-to-end tests of a partitioned fabric twin (fabric.partitions, `etwire run --threads`).

    python3 tests/cli/partitions_e2e_test.py --etwire build/release/etwire --source-dir . --case NAME

Cases:

  same_on_any_cores  configs/twin-congestion.yaml cut into 4 partitions (its queue samples off:
                     not built for partitions) runs on 1 thread, on 2 threads, and on 2 threads
                     held to one core by taskset. Every file it writes is the same byte for byte,
                     and summary.json the same but for the wall-clock time.
  threads_refused    --threads on a configuration of one partition is refused with a message
                     that says why, and nothing is written.
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

FILES = ["flows.csv", "collectives.csv", "ports.csv", "qps.csv"]


def run(args, config, out, *extra, prefix=()):
    return subprocess.run([*prefix, args.etwire, "run", config, "--no-metrics", "--no-progress",
                           "--out", out, *extra], capture_output=True, text=True, timeout=300)


def without_wall_clock(value):
    """summary.json without the keys that measure the wall clock."""
    if isinstance(value, dict):
        return {k: without_wall_clock(v) for k, v in value.items() if k != "wall_seconds"}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value


def case_same_on_any_cores(args, work):
    config = os.path.join(args.source_dir, "configs/twin-congestion.yaml")
    cut = ["--set", "fabric.partitions=4", "--set", "telemetry.record.queue_sample_interval=0s"]
    runs = {
        "1 thread": ([], ["--threads", "1"]),
        "2 threads": ([], ["--threads", "2"]),
        "2 threads on one core": ([shutil.which("taskset"), "-c", "0"], ["--threads", "2"]),
    }
    outputs = {}
    for name, (prefix, threads) in runs.items():
        out = os.path.join(work, name.replace(" ", "-"))
        proc = run(args, config, out, *cut, *threads, prefix=prefix)
        assert proc.returncode == 0, (name, proc.returncode, proc.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        assert summary["status"] == "completed", (name, summary["status"])
        files = {}
        for file in FILES:
            with open(os.path.join(out, file), "rb") as f:
                files[file] = f.read()
        outputs[name] = (without_wall_clock(summary), files)
    first_summary, first_files = outputs["1 thread"]
    assert first_summary["flows"] > 10000, first_summary["flows"]
    for name, (summary, files) in outputs.items():
        for file in FILES:
            assert files[file] == first_files[file], f"{file} differs on {name}"
        assert summary == first_summary, f"summary.json differs on {name}"
    return (f"{first_summary['flows']} flows; {', '.join(FILES)} and summary.json the same on "
            f"{', '.join(outputs)}")


def case_threads_refused(args, work):
    out = os.path.join(work, "out")
    proc = run(args, os.path.join(args.source_dir, "configs/loopback-demo.yaml"), out,
               "--threads", "2")
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "fabric.partitions is 1" in proc.stderr, proc.stderr
    assert not os.path.exists(out), "something was written"
    return proc.stderr.strip().splitlines()[-1]


CASES = {"same_on_any_cores": case_same_on_any_cores, "threads_refused": case_threads_refused}


def main():
    return run_case(CASES, "partitions")


if __name__ == "__main__":
    sys.exit(main())
