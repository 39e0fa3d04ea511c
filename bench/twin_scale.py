#!/usr/bin/env python3
"""The fabric twin at cluster scale: a ring all-reduce on N ranks, replayed by `etwire run`.

One rank per 100 Gb/s loopback port on a leaf-spine twin of 32 ports per leaf and 16 spines
(1:1, ECMP on the UDP source port), DCQCN on, PMTU 4096, one iteration of one all-reduce of
--bytes (default 1 GiB) per rank count. Prints, for each rank count, the scheduler events, the
events per data packet, the wall time of the run, its peak RSS and the cores it kept busy (CPU
time / wall time). The traces come from `etwire synth microbench` (not timed); the run writes
summary.json only (no flows.csv, collectives.csv, qps.csv or ports.csv), so the figures are the
engine's, the transport's and the twin's.

    bench/twin_scale.py [--etwire build/release/etwire] [--ranks 128,256,512,1024]
                        [--bytes 1GiB] [--ranks-per-port K] [--partitions P [--threads T]
                        [--processes N]] [--work DIR] [--json FILE]

--ranks-per-port K puts K consecutive ranks on each port (mapping placement block,
ranks_per_port K: N / K ports), as a server's GPUs share its NICs; the default is one rank a port.

--partitions P cuts the twin into P partitions of its leaves (fabric.partitions; parallel virtual
time), which `etwire run --threads T` runs (default: one thread per core). --processes N spreads
them over N processes of `mpirun -np N` on this machine (each with T threads); the peak RSS is then
the largest process's, and the CPU time that of all.

Each rank count runs in its own process, so each peak RSS is its own (os.wait4's ru_maxrss).
docs/performance.md, "The twin at cluster scale", has the table and the command.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CONFIG = """run:
  name: twin-scale-{ranks}
  seed: 1
  watchdog: 600s
workload:
  iterations: 1
  warmup_iterations: 0
  jobs:
    - name: allreduce
      trace: {trace}
ports:
  - name: h
    count: {ports}
    backend: loopback
    speed: 100Gbps
    mtu: 4200
mapping:
  jobs:
    - job: allreduce
      placement: block
      ranks_per_port: {ranks_per_port}
collectives:
  algorithms:
    all_reduce: ring
transport:
  op: write-with-imm
  pmtu: 4096
  dcqcn:
    enabled: true
fabric:
  topology: leaf-spine
  partitions: {partitions}
  leaf_spine:
    ports_per_leaf: {ports_per_leaf}
    spines: {spines}
    ecmp: udp-source-port
telemetry:
  output_dir: {out}
  record:
    flows: false
    collectives: false
    qps: false
    port_sample_interval: 0s
"""


def run_measured(cmd, log_path):
    """Runs cmd with its stderr in log_path (a file, not a pipe nobody reads until the end);
    returns (exit code, wall seconds, CPU seconds, peak RSS in MB)."""
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(args, ranks, work):
    trace = os.path.join(work, f"r{ranks}", "allreduce")
    subprocess.run([args.etwire, "synth", "microbench", "-c", "all_reduce", "-b", args.bytes,
                    "-n", str(ranks), "-i", "1", "-o", trace], check=True,
                   stdout=subprocess.DEVNULL)
    out = os.path.join(work, f"r{ranks}", "results")
    config = os.path.join(work, f"r{ranks}", "config.yaml")
    ports = ranks // args.ranks_per_port
    ports_per_leaf = min(32, ports)
    with open(config, "w") as f:
        f.write(CONFIG.format(ranks=ranks, ports=ports, ranks_per_port=args.ranks_per_port,
                              trace=trace, out=out, ports_per_leaf=ports_per_leaf,
                              spines=min(16, ports_per_leaf), partitions=args.partitions))
    log = os.path.join(work, f"r{ranks}", "run.log")
    threads = ["--threads", str(args.threads)] if args.threads else []
    launcher = []
    if args.processes > 1:
        launcher = [shutil.which("mpirun"), "--allow-run-as-root", "--oversubscribe", "-np",
                    str(args.processes)]
    code, wall, cpu, rss_mb = run_measured(
        [*launcher, args.etwire, "run", config, "--no-metrics", *threads], log)
    if code != 0:
        with open(log) as f:
            sys.exit(f"twin_scale: etwire run of {ranks} ranks exited {code}:\n{f.read()[-2000:]}")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    data_packets = sum(p["data_packets"] or 0 for p in summary["ports"])
    events = summary["run"]["events"]
    return {"ranks": ranks, "bytes": args.bytes, "partitions": args.partitions,
            "threads": args.threads, "processes": args.processes, "events": events,
            "data_packets": data_packets, "events_per_data_packet": events / data_packets,
            "virtual_ms": summary["run"]["end_time_ns"] / 1e6, "wall_s": wall,
            "events_per_s": events / wall, "cpu_s": cpu, "cores": cpu / wall,
            "peak_rss_mb": rss_mb, "status": summary["status"],
            "failed_flows": summary["failed_flows"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etwire", default=os.path.join("build", "release", "etwire"))
    parser.add_argument("--ranks", default="128,256,512,1024",
                        help="comma-separated rank counts (default 128,256,512,1024)")
    parser.add_argument("--bytes", default="1GiB", help="all-reduce size per rank (default 1GiB)")
    parser.add_argument("--ranks-per-port", type=int, default=1,
                        help="ranks on each port (default 1); must divide every rank count")
    parser.add_argument("--partitions", type=int, default=1,
                        help="partitions of the twin (fabric.partitions, default 1)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads that run them (etwire run --threads; default: one per core)")
    parser.add_argument("--processes", type=int, default=1,
                        help="MPI processes the partitions are spread over (mpirun -np; default 1)")
    parser.add_argument("--work", help="where traces and results go (default: a temporary "
                        "directory, removed at the end)")
    parser.add_argument("--json", help="also write the rows to this file (JSON lines)")
    args = parser.parse_args()
    try:
        ranks = [int(r) for r in args.ranks.split(",")]
    except ValueError:
        parser.error(f"--ranks: not a comma-separated list of whole numbers: {args.ranks}")
    if any(r < 2 for r in ranks):
        parser.error("--ranks: every rank count must be at least 2")
    if args.ranks_per_port < 1 or any(r % args.ranks_per_port for r in ranks):
        parser.error("--ranks-per-port: a positive count that divides every rank count")
    if args.partitions < 1:
        parser.error("--partitions: at least 1")
    if args.threads < 0 or (args.threads and args.partitions == 1):
        parser.error("--threads: a positive count, with --partitions above 1")
    if args.processes < 1 or args.processes > args.partitions:
        parser.error("--processes: a positive count, at most --partitions")
    if args.processes > 1 and not shutil.which("mpirun"):
        parser.error("--processes: mpirun is not on the PATH (Open MPI: apt-get install openmpi-bin)")
    if not os.access(args.etwire, os.X_OK):
        parser.error(f"--etwire: {args.etwire} is not an executable (build it: scripts/setup.sh)")
    work = args.work or tempfile.mkdtemp(prefix="etwire-twin-scale-")
    print(f"{'ranks':>6} {'events':>14} {'ev/pkt':>7} {'virtual':>10} {'wall':>9} "
          f"{'M ev/s':>7} {'RSS':>9} {'cores':>5}")
    incomplete = 0
    try:
        for n in ranks:
            row = measure(args, n, work)
            incomplete += row["status"] != "completed" or row["failed_flows"] != 0
            print(f"{n:>6} {row['events']:>14,} {row['events_per_data_packet']:>7.2f} "
                  f"{row['virtual_ms']:>7.2f} ms {row['wall_s']:>7.1f} s "
                  f"{row['events_per_s'] / 1e6:>7.2f} {row['peak_rss_mb']:>6.0f} MB "
                  f"{row['cores']:>5.2f}"
                  + ("" if row["status"] == "completed" and row["failed_flows"] == 0 else
                     f"  ({row['status']}, {row['failed_flows']} failed flows)"), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    # A run that did not complete measured something else: say so in the exit status.
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
