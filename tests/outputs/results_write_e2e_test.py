#!/usr/bin/env python3
"""End-to-end tests of result files that cannot be written whole (a full disk, as a file size
limit makes it: RLIMIT_FSIZE turns writes past it into EFBIG, as a full disk's ENOSPC).

    python3 tests/outputs/results_write_e2e_test.py --etwire build/release/etwire --source-dir . \\
        --case NAME

Cases:

  file_size_limit  `run` under a 16 KiB file size limit: exit 1; summary.json (26 KB) is not
                   there rather than cut short, and no temporary file is left; collectives.csv
                   and qps.csv, which fit, are written; flows.csv and ports.csv, streamed during
                   the run, hold whole lines only, and the error says how many they hold and how
                   many were lost, which add up to the lines of a run without the limit.
  previous_kept    The same over the results of an earlier run: its summary.json stays as it
                   was, whole, instead of a truncated new one.
  dev_full         flows.csv a symlink to /dev/full: the run ends, says flows.csv could not be
                   written (exit 1), and writes the other files.
  through_devices  `report -o /dev/stdout` writes the page to stdout: a path that is not a
                   regular file is written through, never replaced by a rename.
"""

import json
import os
import resource
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

HANG = 300  # a run of the demo takes a second or two; this only turns a hang into a failure
LIMIT = 16 << 10


def run(args, out, limit=None):
    def limited():
        # Writes past the limit fail with EFBIG instead of killing the process (SIGXFSZ).
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [args.etwire, "run", os.path.join(args.source_dir, "configs/loopback-demo.yaml"),
         "--out", out, "--no-metrics", "--no-progress"],
        capture_output=True, text=True, timeout=HANG,
        preexec_fn=limited if limit is not None else None)


def lines(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data.endswith(b"\n"), f"{path} ends inside a line"
    return data.count(b"\n")


def temporaries(out):
    return [name for name in os.listdir(out) if name.endswith(".tmp")]


def check_streamed(stderr, out, name, full_lines):
    path = os.path.join(out, name)
    held = lines(path)
    expected = (f"error: {path}: cannot write: File too large; the file holds its first {held} "
                f"lines, whole, and {full_lines - held} more were not written")
    assert expected in stderr, (expected, stderr)
    assert 0 < held < full_lines, (name, held, full_lines)


def case_file_size_limit(args, work):
    full = os.path.join(work, "full")
    proc = run(args, full)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert os.path.getsize(os.path.join(full, "summary.json")) > LIMIT

    out = os.path.join(work, "limited")
    proc = run(args, out, LIMIT)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    summary = os.path.join(out, "summary.json")
    assert f"error: {summary}: cannot write: File too large; not written" in proc.stderr, \
        proc.stderr
    assert not os.path.exists(summary), "a summary.json that could not be written whole is there"
    assert not temporaries(out), temporaries(out)
    for name in ("collectives.csv", "qps.csv"):
        with open(os.path.join(out, name)) as a, open(os.path.join(full, name)) as b:
            assert a.read() == b.read(), name
    for name in ("flows.csv", "ports.csv"):
        check_streamed(proc.stderr, out, name, lines(os.path.join(full, name)))
    return f"flows.csv kept {lines(os.path.join(out, 'flows.csv'))} whole lines; no summary.json"


def case_previous_kept(args, work):
    out = os.path.join(work, "results")
    proc = run(args, out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(os.path.join(out, "summary.json")) as f:
        before = f.read()
    proc = run(args, out, LIMIT)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert "summary.json: cannot write: File too large; not written" in proc.stderr, proc.stderr
    with open(os.path.join(out, "summary.json")) as f:
        after = f.read()
    assert after == before, "the earlier summary.json changed"
    json.loads(after)
    assert not temporaries(out), temporaries(out)
    return "the earlier summary.json is kept whole"


def case_dev_full(args, work):
    out = os.path.join(work, "results")
    os.makedirs(out)
    os.symlink("/dev/full", os.path.join(out, "flows.csv"))
    proc = run(args, out)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    flows = os.path.join(out, "flows.csv")
    assert f"error: {flows}: cannot write: No space left on device;" in proc.stderr, proc.stderr
    with open(os.path.join(out, "summary.json")) as f:
        assert json.load(f)["status"] == "completed"
    assert os.path.islink(flows), "flows.csv was replaced"
    return "flows.csv on /dev/full is reported; the other files are written"


def case_through_devices(args, work):
    out = os.path.join(work, "results")
    proc = run(args, out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = subprocess.run([args.etwire, "report", out, "-o", "/dev/stdout"], capture_output=True,
                          text=True, timeout=HANG)
    assert page.returncode == 0, page.stderr[-2000:]
    assert page.stdout.startswith("<!DOCTYPE html>"), page.stdout[:200]
    # The page, then the line that names where it went.
    assert page.stdout.endswith("</html>\n/dev/stdout\n"), page.stdout[-200:]
    return f"the report went to stdout ({len(page.stdout)} characters)"


CASES = {
    "file_size_limit": case_file_size_limit,
    "previous_kept": case_previous_kept,
    "dev_full": case_dev_full,
    "through_devices": case_through_devices,
}


def main():
    return run_case(CASES, "results-write")


if __name__ == "__main__":
    sys.exit(main())
