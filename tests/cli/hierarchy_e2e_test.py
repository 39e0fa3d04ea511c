#!/usr/bin/env python3
"""Hierarchical all-reduce in a run: a 16 MiB all-reduce whose trace says involved_dim
[true, true], over four servers of four rail-placed 100G NICs on the twin, with
collectives.hierarchy: involved-dim. It runs the hierarchical algorithm in three phases: a ring
reduce-scatter inside each server (no frame on the wire, three steps of a 4 MiB slice at the
interconnect's 100 GB/s before the first network flow), a ring between the servers on each rail
(every flow joins two ranks of one local index), and a ring all-gather inside each server (three
more steps after the last network flow). With the key off and channels: 0 the same trace runs one
ring in group order, whose network hops cross rails; collectives.algorithms naming it runs it
without involved_dim. An all-reduce over dimension 0 alone ([true, false]) runs in each server
apart, putting nothing on the wire; one over the others ([false, true]) runs on each rail apart,
every flow between two servers on one rail. A trace whose involved_dim keeps some of the hosts' dimensions and leaves out others
is refused before the first packet, naming the file and the node.

    python3 tests/cli/hierarchy_e2e_test.py --etwire build/release/etwire --source-dir . \
        --case phases|off|explicit|within|across|refused
"""

import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

RANKS_PER_HOST = 4
BANDWIDTH_BPS = 800e9  # hosts.bandwidth below
BYTES = 16 << 20

CONFIG = """run:
  name: hierarchy
workload:
  iterations: 1
  jobs:
    - name: ar
      trace: {trace}
ports:
  - name: n
    count: 16
    backend: loopback
    speed: 100Gbps
mapping:
  jobs:
    - job: ar
      placement: rail
      hosts: {{ranks_per_host: 4, bandwidth: 800Gbps, latency: 1us}}
fabric:
  topology: leaf-spine
  leaf_spine: {{ports_per_leaf: 4, spines: 2}}
  rails: {{nics_per_host: 4}}
collectives:
{collectives}telemetry:
  metrics: {{enabled: false}}
"""


def etwire(args, *argv):
    return subprocess.run([args.etwire, *argv], capture_output=True, text=True, timeout=300)


def trace(args, work, dims):
    prefix = os.path.join(work, "trace-" + (dims or "none").replace(",", "-"), "ar")
    extra = ["--dims", dims] if dims else []
    proc = etwire(args, "synth", "microbench", "-o", prefix, "-b", str(BYTES), "-n", "16", *extra)
    assert proc.returncode == 0, proc.stderr
    return prefix


def config(work, name, trace_prefix, collectives):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(CONFIG.format(trace=trace_prefix, collectives=collectives))
    return path


def run(args, work, name, dims, collectives):
    path = config(work, name, trace(args, work, dims), collectives)
    out = os.path.join(work, "results-" + name)
    proc = etwire(args, "run", path, "--no-progress", "--out", out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(os.path.join(out, "collectives.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, "flows.csv")) as f:
        flows = list(csv.DictReader(f))
    with open(os.path.join(out, "summary.json")) as f:
        assert json.load(f)["status"] == "completed"
    return rows, flows


def check_phases(row, flows):
    assert row["algorithm"] == "hierarchical", row["algorithm"]
    assert flows, "no network flow"
    for flow in flows:
        src, dst = int(flow["src_rank"]), int(flow["dst_rank"])
        assert src // RANKS_PER_HOST != dst // RANKS_PER_HOST, flow
        assert src % RANKS_PER_HOST == dst % RANKS_PER_HOST, f"flow {src} -> {dst} leaves its rail"
    # Each server phase is three ring steps of one slice (a quarter of the buffer) over each
    # rank's interconnect port: no network flow before the first, none after the second.
    intra_ns = 3 * (BYTES / RANKS_PER_HOST) * 8 / BANDWIDTH_BPS * 1e9
    first_posted = min(int(f["posted_ns"]) for f in flows)
    last_delivered = max(int(f["delivered_ns"]) for f in flows)
    assert first_posted >= intra_ns, (first_posted, intra_ns)
    assert int(row["end_ns"]) - last_delivered >= intra_ns, (row["end_ns"], last_delivered)
    return first_posted, last_delivered


def case_phases(args, work):
    (row,), flows = run(args, work, "dims", "true,true", "  hierarchy: involved-dim\n")
    first, last = check_phases(row, flows)
    return (f"{len(flows)} network flows, all on their rail, posted from {first} ns, delivered by "
            f"{last} ns of {row['end_ns']} ns")


def case_off(args, work):
    (row,), flows = run(args, work, "off", "true,true", "  hierarchy: off\n  channels: 0\n")
    assert row["algorithm"] == "ring", row["algorithm"]
    crossing = [f for f in flows if int(f["src_rank"]) % 4 != int(f["dst_rank"]) % 4]
    assert crossing, "one ring in group order should cross rails between servers"
    return f"hierarchy off: ring, {len(crossing)} of {len(flows)} network flows cross rails"


def case_explicit(args, work):
    (row,), flows = run(args, work, "explicit", None, "  algorithms: {all_reduce: hierarchical}\n")
    check_phases(row, flows)
    return "collectives.algorithms.all_reduce: hierarchical runs the three phases without dims"


def case_within(args, work):
    rows, flows = run(args, work, "within", "true,false", "  hierarchy: involved-dim\n")
    assert len(rows) == 16 // RANKS_PER_HOST, rows
    assert all(int(r["group_size"]) == RANKS_PER_HOST for r in rows), rows
    assert not flows, f"{len(flows)} flows on the wire: a server's all-reduce stays in it"
    # Each server's ring all-reduce: 2 (s - 1) steps of a quarter of the buffer on the
    # interconnect, at its bandwidth and latency.
    least_ns = 2 * (RANKS_PER_HOST - 1) * (BYTES / RANKS_PER_HOST) * 8 / BANDWIDTH_BPS * 1e9
    for r in rows:
        assert int(r["cct_ns"]) >= least_ns, (r["cct_ns"], least_ns)
    # Under the tuner the plan lists the servers' alike parts once.
    path = config(work, "within-auto", trace(args, work, "true,false"),
                  "  hierarchy: involved-dim\n  protocol: auto\n")
    plan = etwire(args, "plan", path, "--json")
    assert plan.returncode == 0, plan.stderr[-3000:]
    choices = json.loads(plan.stdout)["protocol"]["choices"]
    assert len(choices) == 1 and choices[0]["ranks"] == RANKS_PER_HOST, choices
    return (f"{len(rows)} all-reduces, one per server of {RANKS_PER_HOST}, no network flow; "
            f"one tuner row for them")


def case_across(args, work):
    rows, flows = run(args, work, "across", "false,true", "  hierarchy: involved-dim\n")
    assert len(rows) == RANKS_PER_HOST, rows
    assert all(int(r["group_size"]) == 16 // RANKS_PER_HOST for r in rows), rows
    rails = set()
    for flow in flows:
        src, dst = int(flow["src_rank"]), int(flow["dst_rank"])
        assert src // RANKS_PER_HOST != dst // RANKS_PER_HOST, flow
        assert src % RANKS_PER_HOST == dst % RANKS_PER_HOST, f"flow {src} -> {dst} leaves its rail"
        rails.add(src % RANKS_PER_HOST)
    assert rails == set(range(RANKS_PER_HOST)), rails
    return f"{len(rows)} all-reduces, one per rail, {len(flows)} flows each on its rail"


def case_refused(args, work):
    path = config(work, "partial", trace(args, work, "true,true,false"),
                  "  hierarchy: involved-dim\n")
    for command in ("validate", "run"):
        proc = etwire(args, command, path, *(["--no-progress", "--out",
                                               os.path.join(work, "r")] if command == "run" else []))
        assert proc.returncode == 2, (command, proc.returncode, proc.stderr[-2000:])
        message = proc.stderr
        assert "involved_dim [true, true, false] leaves out some of the hosts' dimensions" in \
            message, message
        assert "ar.0.et: record 1 (node id 1)" in message, message
        assert "collectives.hierarchy" in message, message
    assert not os.path.exists(os.path.join(work, "r", "flows.csv"))
    return "a trace keeping one of the hosts' two dimensions refused by validate and run (exit 2)"


if __name__ == "__main__":
    sys.exit(run_case({"phases": case_phases, "off": case_off, "explicit": case_explicit,
                       "within": case_within, "across": case_across, "refused": case_refused},
                      "hierarchy"))
