#!/usr/bin/env python3
"""Two etwire builds timed side by side, one on each core, on the same `etwire run`.

This machine's speed drifts by a tenth or more from one run to the next (it is shared), so two
builds timed one after the other compare the machine as much as the builds. Here both run at
once, each pinned to a core of its own, and the cores are swapped from one pair to the next: both
meet the same drift, and each pair gives a ratio (after's wall time / before's) taken under the
same conditions. Single pairs still spread (by about a tenth here); read the median of a dozen.
Prints every pair and the median, least and greatest ratio.

    bench/side_by_side.py --before OLD/etwire --after NEW/etwire [--pairs 12] [--cpus 0,1]
                          [--work DIR] -- run CONFIG [more etwire run options]

The command after `--` is an `etwire run` command line. Each side writes its results to a
directory of its own (--out), without the metrics endpoint (both would take its port) or the
progress line. A pair in which either run fails ends the comparison with its log. Both builds
running at once share the memory bus and the last-level cache, so a ratio says which build is
faster beside the other, not how fast either runs alone: docs/performance.md.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def start(binary, command, out, cpu, log_path):
    """Starts `binary command --out out` pinned to `cpu`; returns (process, log file)."""
    log = open(log_path, "w")
    argv = [binary, *command, "--out", out, "--no-metrics", "--no-progress"]
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    return proc, log


def run_pair(args, pair, work):
    """Runs one pair at once; returns the two wall times (before, after) in seconds."""
    cpus = args.cpus if pair % 2 == 0 else args.cpus[::-1]
    sides = {}
    began = time.monotonic()
    for side, binary, cpu in (("before", args.before, cpus[0]), ("after", args.after, cpus[1])):
        out = os.path.join(work, f"{side}-{pair}")
        log_path = os.path.join(work, f"{side}-{pair}.log")
        sides[side] = (*start(binary, args.command, out, cpu, log_path), log_path)
    # Each side's time is until its own end: polled, as either may end first.
    # A side that fails ends the other (the pair measures nothing then), and is the one reported.
    walls = {}
    failed = None
    while len(walls) < len(sides):
        for side, (proc, _, _) in sides.items():
            if side not in walls and proc.poll() is not None:
                walls[side] = time.monotonic() - began
                if proc.returncode != 0 and failed is None:
                    failed = side
                    for other, _, _ in sides.values():
                        if other.poll() is None:
                            other.kill()
        time.sleep(0.01)
    for proc, log, _ in sides.values():
        log.close()
    if failed is not None:
        proc, _, log_path = sides[failed]
        with open(log_path) as f:
            tail = f.read()[-2000:]
        sys.exit(f"side_by_side: the {failed} build exited {proc.returncode} in pair {pair + 1} "
                 f"({log_path}):\n{tail}")
    return walls["before"], walls["after"], cpus


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the etwire binary to compare against")
    parser.add_argument("--after", required=True, help="the etwire binary being measured")
    parser.add_argument("--pairs", type=int, default=12,
                        help="pairs of runs (default 12; the cores swap from one to the next)")
    parser.add_argument("--cpus", default=None,
                        help="the two CPUs to pin to, e.g. 0,1 (default: the first two this "
                        "process may use)")
    parser.add_argument("--work", help="where results and logs go (default: a temporary "
                        "directory, kept, printed at the end)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- run CONFIG [options]: the etwire run command line")
    args = parser.parse_args()
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command or args.command[0] != "run" or len(args.command) < 2:
        parser.error("after --, an etwire run command line: -- run CONFIG [options]")
    if any(a in ("--out", "--metrics") or a.startswith("--out=") for a in args.command):
        parser.error("the command sets --out or --metrics: each side takes a results directory "
                     "of its own and runs without the metrics endpoint")
    for name in ("before", "after"):
        binary = getattr(args, name)
        if not os.access(binary, os.X_OK):
            parser.error(f"--{name}: {binary} is not an executable")
    if args.pairs < 1:
        parser.error("--pairs: at least 1")
    usable = sorted(os.sched_getaffinity(0))
    if args.cpus is None:
        if len(usable) < 2:
            parser.error(f"two CPUs are needed to run side by side; this process may use "
                         f"{len(usable)}")
        args.cpus = usable[:2]
    else:
        try:
            args.cpus = [int(c) for c in args.cpus.split(",")]
        except ValueError:
            parser.error(f"--cpus: not two CPU numbers: {args.cpus}")
        if len(args.cpus) != 2 or args.cpus[0] == args.cpus[1]:
            parser.error(f"--cpus: two different CPU numbers: {args.cpus}")
        missing = [c for c in args.cpus if c not in usable]
        if missing:
            parser.error(f"--cpus: this process may not use CPU {missing[0]} (it may use "
                         f"{','.join(map(str, usable))})")
    return args


def main():
    args = parse_args()
    work = args.work or tempfile.mkdtemp(prefix="etwire-side-by-side-")
    os.makedirs(work, exist_ok=True)
    print(f"{'pair':>4} {'before':>9} {'after':>9} {'cpus':>5} {'after/before':>12}", flush=True)
    ratios = []
    for pair in range(args.pairs):
        before, after, cpus = run_pair(args, pair, work)
        ratios.append(after / before)
        print(f"{pair + 1:>4} {before:>7.2f} s {after:>7.2f} s {cpus[0]:>2},{cpus[1]:<2} "
              f"{ratios[-1]:>12.3f}", flush=True)
    print(f"after/before: median {statistics.median(ratios):.3f}, least {min(ratios):.3f}, "
          f"greatest {max(ratios):.3f} over {len(ratios)} pairs (results and logs in {work})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
