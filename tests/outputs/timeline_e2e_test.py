#!/usr/bin/env python3
"""`etwire timeline` on real runs: the trace is valid against a JSON Schema of the trace event
format's JSON object form (the events Perfetto and chrome://tracing read), and it holds what the
results files hold: a slice per row of nodes.csv on its rank's track, per collective instance of
summary.json, per row of flows.csv on its QP's track, and the counters of ports.csv.

    python3 tests/outputs/timeline_e2e_test.py --etwire build/release/etwire --source-dir . \
        --case structure|bad_input|record_off

Cases:

  structure   configs/mixed-allreduce-alltoall.yaml (two jobs on sixteen ports): the schema, the
              counts, the times, no overlap within a thread, every track named.
  bad_input   not a results directory, malformed nodes.csv rows, an unwritable output: exit 2
              or 1 with the file and line named.
  record_off  telemetry.record.nodes false: no nodes.csv, and the timeline says the rank tracks
              are left out; a run split between processes refuses nodes: true.
  collnet     all_reduce: collnet on the demo: the switch's aggregation host (agg0) is in
              summary.json, flows.csv, qps.csv, a process of the timeline, and the report reads it.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

NUMBER = {"type": "number", "minimum": 0}
ID = {"type": "integer", "minimum": 0}
# The trace event format's JSON object form, as far as etwire writes it: complete slices ("X"),
# counters ("C") and the metadata naming and ordering processes and threads ("M").
SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
        "traceEvents": {"type": "array", "items": {"oneOf": [
            {"type": "object", "required": ["ph", "name", "cat", "ts", "dur", "pid", "tid"],
             "properties": {"ph": {"const": "X"}, "name": {"type": "string"},
                            "cat": {"type": "string"}, "ts": NUMBER, "dur": NUMBER, "pid": ID,
                            "tid": ID, "args": {"type": "object"}}},
            {"type": "object", "required": ["ph", "name", "ts", "pid", "args"],
             "properties": {"ph": {"const": "C"}, "name": {"type": "string"}, "ts": NUMBER,
                            "pid": ID, "args": {"type": "object",
                                                "additionalProperties": {"type": "number"}}}},
            {"type": "object", "required": ["ph", "name", "pid", "args"],
             "properties": {"ph": {"const": "M"}, "pid": ID, "tid": ID,
                            "name": {"enum": ["process_name", "process_sort_index",
                                              "thread_name", "thread_sort_index"]},
                            "args": {"type": "object"}}},
        ]}},
    },
}


def run(args, *argv, cwd=None):
    return subprocess.run([args.etwire, *argv], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def replay(args, work, config, *extra):
    out = os.path.join(work, "results")
    proc = run(args, "run", os.path.join(args.source_dir, "configs", config), "--no-metrics",
               "--no-progress", "--out", out, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def micros(ns):
    return int(ns) / 1000.0


def check_no_overlap(slices):
    """Slices of one thread never overlap: the format wants them nested, and etwire never nests."""
    by_thread = defaultdict(list)
    for e in slices:
        by_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for thread, spans in by_thread.items():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert start >= end - 1e-9, (thread, end, start)


def union_ns(spans):
    """The time covered by `spans` (start, end), overlaps counted once."""
    total, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def check_rank_time(nodes, summary):
    """nodes.csv's intervals add up to the compute and communication time summary.json gives
    each rank in each iteration (both count overlapping nodes once)."""
    spans = defaultdict(list)
    for row in nodes:
        kind = "comm_ns" if row["type"].startswith("COMM") else "compute_ns"
        spans[(row["job"], int(row["iteration"]), int(row["rank"]), kind)].append(
            (int(row["start_ns"]), int(row["end_ns"])))
    checked = 0
    for it in summary["iterations"]:
        for rank in it["ranks"]:
            for kind in ("compute_ns", "comm_ns"):
                got = union_ns(spans[(it["job"], it["iteration"], rank["rank"], kind)])
                assert got == rank[kind], (it["job"], it["iteration"], rank["rank"], kind, got)
                checked += 1
    assert checked > 0


def case_structure(args, work):
    out = replay(args, work, "mixed-allreduce-alltoall.yaml")
    proc = run(args, "timeline", out)
    assert proc.returncode == 0, proc.stderr
    path = os.path.join(out, "timeline.json")
    assert proc.stdout.strip() == path, proc.stdout
    with open(path) as f:
        trace = json.load(f)
    jsonschema.validate(trace, SCHEMA)
    events = trace["traceEvents"]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    nodes = read_csv(os.path.join(out, "nodes.csv"))
    flows = read_csv(os.path.join(out, "flows.csv"))
    ports = read_csv(os.path.join(out, "ports.csv"))
    assert len(summary["jobs"]) == 2 and nodes and flows and ports
    check_rank_time(nodes, summary)

    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
    slices = [e for e in events if e["ph"] == "X"]
    for e in slices:
        assert (e["pid"], None) in names and (e["pid"], e["tid"]) in names, e
    check_no_overlap(slices)

    # Rank tracks: one slice per nodes.csv row, on "rank R compute|communication", at its times.
    rank_slices = [e for e in slices if e["cat"] in ("compute", "communication")]
    assert len(rank_slices) == len(nodes), (len(rank_slices), len(nodes))
    expected = Counter((row["job"], int(row["rank"]), row["type"].startswith("COMM"),
                        micros(row["start_ns"]), micros(row["end_ns"])) for row in nodes)
    drawn = Counter()
    for e in rank_slices:
        job = names[(e["pid"], None)].removeprefix("job ").removesuffix(": ranks")
        rank, kind = names[(e["pid"], e["tid"])].split()[1:3]
        drawn[(job, int(rank), kind == "communication", e["ts"], round(e["ts"] + e["dur"], 3))] += 1
    assert drawn == expected, (drawn - expected, expected - drawn)
    # A communication node lies within its collective instance, and is drawn by its type.
    instances = {c["instance"]: c for c in summary["collectives"]}
    for row in nodes:
        if row["instance"]:
            c = instances[int(row["instance"])]
            assert c["first_arrival_ns"] <= int(row["start_ns"]) <= c["last_arrival_ns"], row
            assert c["last_arrival_ns"] <= int(row["end_ns"]) <= c["end_ns"], (row, c)
        else:
            assert not row["type"].startswith("COMM") and int(row["end_ns"]) > int(row["start_ns"])
    assert {e["name"] for e in rank_slices if e["cat"] == "communication"} == \
        {"all_reduce", "all_to_all"}

    # Collective tracks: one per instance, from its last arrival for its CCT.
    coll_slices = [e for e in slices if e["cat"].startswith("collective")]
    assert len(coll_slices) == len(summary["collectives"])
    for e in coll_slices:
        c = instances[e["args"]["instance"]]
        assert e["ts"] == micros(c["last_arrival_ns"]) and e["args"]["cct_ns"] == c["cct_ns"], e

    # QP tracks: one slice per flow on its sending port's "QP n to <port>" thread.
    flow_slices = [e for e in slices if e["cat"].startswith("flow")]
    assert len(flow_slices) == len(flows)
    port_names = [p["name"] for p in summary["ports"]]
    by_id = {int(row["flow_id"]): row for row in flows}
    for e in flow_slices:
        row = by_id[e["args"]["flow_id"]]
        assert names[(e["pid"], None)] == f"port {port_names[int(row['src_port'])]}", e
        assert names[(e["pid"], e["tid"])].split(" #")[0] == \
            f"QP {row['qpn']} to {port_names[int(row['dst_port'])]}", e
        assert e["ts"] == micros(row["posted_ns"]), e

    # Counters: per ports.csv row a paced rate and the congestion totals on the port's process;
    # the throughput integrates back to the port's bytes.
    counters = [e for e in events if e["ph"] == "C"]
    per_port = Counter(row["port"] for row in ports)
    paced = Counter(names[(e["pid"], None)].removeprefix("port ") for e in counters
                    if e["name"] == "paced rate (Gb/s)")
    assert paced == per_port, (paced, per_port)
    last = {row["port"]: row for row in ports}
    samples = defaultdict(list)
    for e in counters:
        if e["name"] == "throughput (Gb/s)":
            samples[names[(e["pid"], None)].removeprefix("port ")].append((e["ts"], e["args"]))
    for port, row in last.items():
        points = sorted(samples[port], key=lambda p: p[0])
        times = sorted({micros(r["time_ns"]) for r in ports if r["port"] == port})
        sent = sum(p[1]["tx"] * (t1 - p[0]) * 1000 / 8 for p, t1 in zip(points, times[1:]))
        assert abs(sent - int(row["tx_bytes"])) <= 1e-6 * int(row["tx_bytes"]) + 1, (port, sent)
    return (f"{len(events)} events valid; {len(rank_slices)} node, {len(coll_slices)} "
            f"collective and {len(flow_slices)} flow slices match the files")


def case_bad_input(args, work):
    out = replay(args, work, "loopback-demo.yaml")
    proc = run(args, "timeline", work)
    assert proc.returncode == 2 and "summary.json" in proc.stderr, proc
    rows = open(os.path.join(out, "nodes.csv")).read().splitlines()
    broken = os.path.join(work, "broken")
    def field(index, value):
        return lambda row: ",".join(value if i == index else f
                                    for i, f in enumerate(row.split(",")))
    checks = [
        (2, "end_ns is before start_ns", field(8, "-1")),
        (3, "job \"nosuch\" is not one of", field(0, "nosuch")),
        (4, "rank 99 is not one of", field(1, "99")),
        (5, "expected an integer, got \"soon\"", field(7, "soon")),
        (2, "1 fields, the header has 9", lambda row: row.split(",")[0]),
    ]
    for line, words, change in checks:
        shutil.rmtree(broken, ignore_errors=True)
        shutil.copytree(out, broken)
        changed = list(rows)
        changed[line - 1] = change(changed[line - 1])
        with open(os.path.join(broken, "nodes.csv"), "w") as f:
            f.write("\n".join(changed) + "\n")
        proc = run(args, "timeline", broken)
        assert proc.returncode == 2, (words, proc)
        assert f"nodes.csv:{line}" in proc.stderr and words in proc.stderr, (words, proc.stderr)
        assert not os.path.exists(os.path.join(broken, "timeline.json")), words
    proc = run(args, "timeline", out, "-o", "/proc/version/no.json")
    assert proc.returncode == 1 and "/proc/version/no.json" in proc.stderr, proc
    return f"{len(checks)} malformed nodes.csv files refused by line; no directory, no output"


def case_record_off(args, work):
    out = replay(args, work, "loopback-demo.yaml", "--set", "telemetry.record.nodes=false")
    assert not os.path.exists(os.path.join(out, "nodes.csv"))
    proc = run(args, "timeline", out)
    assert proc.returncode == 0, proc.stderr
    assert "nodes.csv is not there" in proc.stderr and "no rank tracks" in proc.stderr, proc
    with open(os.path.join(out, "timeline.json")) as f:
        events = json.load(f)["traceEvents"]
    assert not [e for e in events if e.get("cat") in ("compute", "communication")]
    assert [e for e in events if e.get("cat") == "flow"]
    proc = run(args, "validate", os.path.join(args.source_dir, "configs", "multi-host-memif.yaml"),
               "--set", "telemetry.record.nodes=true")
    assert proc.returncode == 2 and "telemetry.record.nodes" in proc.stdout + proc.stderr, proc
    return "no nodes.csv, no rank tracks, said so; a split run refuses nodes: true"


def case_collnet(args, work):
    out = replay(args, work, "loopback-demo.yaml", "--set",
                 "collectives.algorithms.all_reduce=collnet")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    assert summary["aggregation_hosts"] == ["agg0"], summary["aggregation_hosts"]
    node = len(summary["ports"])
    flows = read_csv(os.path.join(out, "flows.csv"))
    assert flows and all(node in (int(r["src_port"]), int(r["dst_port"])) for r in flows)
    qps = read_csv(os.path.join(out, "qps.csv"))
    assert sum(r["port"] == "agg0" for r in qps) == 16, Counter(r["port"] for r in qps)
    proc = run(args, "timeline", out)
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(out, "timeline.json")) as f:
        events = json.load(f)["traceEvents"]
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
    flow_slices = [e for e in events if e["ph"] == "X" and e["cat"].startswith("flow")]
    assert len(flow_slices) == len(flows)
    up = [e for e in flow_slices if names[(e["pid"], e["tid"])].endswith(" to agg0")]
    down = [e for e in flow_slices if names[(e["pid"], None)] == "port agg0"]
    assert len(up) == len(down) == len(flows) // 2, (len(up), len(down), len(flows))
    report = run(args, "report", out)
    assert report.returncode == 0, report.stderr
    return f"{len(flows)} flows, half of them from agg0, drawn and reported"


if __name__ == "__main__":
    sys.exit(run_case({"structure": case_structure, "bad_input": case_bad_input,
                       "record_off": case_record_off, "collnet": case_collnet}, "timeline"))
