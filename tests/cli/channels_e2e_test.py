#!/usr/bin/env python3
"""Ring channels in a run (collectives.channels): a 1 GiB ring all-reduce over two servers of
eight ranks, rail-placed on 400G NICs (a NIC per rank, one rail leaf per NIC), on the fabric
twin. With eight channels every one of the 16 NICs carries the same bytes (within 5 %) and the
collective reaches at least 85 % of the eight NICs' bus bandwidth bound, and so does the default
(channels unset: one per NIC of the server, eight); with one ring in group order (channels: 0)
the two NICs at the host boundaries carry everything. With two planes the group-order ring has
no path and is refused; the channels, each on one rail, run. NCCL's tree over the same two
planes with eight channels (one tree entering both servers per rail) loads every NIC with an
eighth of the buffer, and so do NVLS and NVLS-tree (each GPU's NIC carries its own slice). The
four ring channels of an NCCL graph dump (tests/cli/data) load NICs 0-3 of each server alike and
leave NICs 4-7 idle, as the graph says. With `all_reduce: auto` the plan's pick per size is what
the run runs. With NCCL's topology of the servers each rank sits on its GPU's NIC.

    python3 tests/cli/channels_e2e_test.py --etwire build/release/etwire --source-dir . \
        --case rails|planes|tree|nvls|graph|auto|topology
"""

import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

CONFIG = """run:
  name: channels-{name}
workload:
  iterations: 1
  jobs:
    - name: allreduce
      trace: {trace}
ports:
  - name: n
    count: 16
    backend: loopback
    speed: 400Gbps
    mtu: 4200
mapping:
  jobs:
    - job: allreduce
      placement: rail
      hosts: {{ranks_per_host: 8, bandwidth: 3600Gbps, latency: 1us}}
fabric:
  topology: leaf-spine
  leaf_spine: {{ports_per_leaf: 2, spines: 2}}
  rails: {{nics_per_host: 8, planes: {planes}}}
collectives:
  chunks: 16
{channels}{algorithm}telemetry:
  metrics: {{enabled: false}}
"""


def etwire(args, *argv):
    return subprocess.run([args.etwire, *argv], capture_output=True, text=True, timeout=600)


def trace(args, work, size="1GiB"):
    prefix = os.path.join(work, "trace-" + size, "ar")
    proc = etwire(args, "synth", "microbench", "-o", prefix, "-b", size, "-n", "16")
    assert proc.returncode == 0, proc.stderr
    return prefix


def write_config(args, work, name, planes, channels, algorithm=None, extra="", size="1GiB"):
    config = os.path.join(work, name + ".yaml")
    with open(config, "w") as f:
        given = f"  channels: {channels}\n" if channels is not None else ""
        f.write(CONFIG.format(name=name, trace=trace(args, work, size), planes=planes,
                              channels=given + extra,
                              algorithm=(f"  algorithms: {{all_reduce: {algorithm}}}\n"
                                         if algorithm else "")))
    return config


def run(args, work, name, planes, channels, algorithm=None, extra="", size="1GiB"):
    config = write_config(args, work, name, planes, channels, algorithm, extra, size)
    out = os.path.join(work, "results-" + name)
    proc = etwire(args, "run", config, "--no-progress", "--out", out)
    return proc, out


def measured(out):
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    assert summary["status"] == "completed", summary["status"]
    (coll,) = [c for c in summary["collectives"] if not c["warmup"]]
    tx = [p["tx_bytes"] for p in summary["ports"]]
    # The bound: eight NICs' RoCE goodput, at nccl-tests' busbw.
    bound = 8 * summary["run"]["goodput_bytes_per_second"] / 1e9
    return tx, coll["busbw_GBps"], bound


def check_even(tx, busbw, bound):
    assert min(tx) > 0 and max(tx) <= 1.05 * min(tx), tx
    assert busbw >= 0.85 * bound, (busbw, bound)


def case_rails(args, work):
    proc, out = run(args, work, "eight", 1, 8)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tx, busbw, bound = measured(out)
    check_even(tx, busbw, bound)
    proc, default = run(args, work, "default", 1, None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tx_default, busbw_default, _ = measured(default)
    check_even(tx_default, busbw_default, bound)
    proc, one = run(args, work, "one", 1, 0)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tx_one, busbw_one, _ = measured(one)
    busy = [i for i, b in enumerate(tx_one) if b > max(tx_one) / 100]
    assert busy == [7, 15], tx_one
    assert busbw_one < bound / 4, busbw_one
    return (f"8 channels: every NIC {min(tx)}..{max(tx)} bytes, busbw {busbw:.1f} GB/s of a "
            f"{bound:.1f} GB/s bound; the default (a channel per NIC): busbw "
            f"{busbw_default:.1f} GB/s; one ring: NICs {busy} only, {busbw_one:.1f} GB/s")


def case_planes(args, work):
    proc, _ = run(args, work, "one", 2, 0)
    assert proc.returncode == 2 and "no path" in proc.stderr, proc.stderr[-3000:]
    proc, out = run(args, work, "eight", 2, 8)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tx, busbw, bound = measured(out)
    check_even(tx, busbw, bound)
    return f"two planes: one ring refused; 8 channels every NIC even, busbw {busbw:.1f} GB/s"


def check_eighth(tx):
    # Each NIC carries an eighth of the 1 GiB buffer (one direction of one share), plus headers.
    share = (1 << 30) / 8
    assert all(share <= b <= 1.1 * share for b in tx), tx
    assert max(tx) <= 1.05 * min(tx), tx


def case_tree(args, work):
    proc, out = run(args, work, "tree", 2, 8, "tree")
    assert proc.returncode == 0, proc.stderr[-3000:]
    tx, busbw, _ = measured(out)
    check_eighth(tx)
    return f"tree, two planes, 8 channels: every NIC {min(tx)}..{max(tx)} bytes, busbw {busbw:.1f}"


def case_nvls(args, work):
    lines = []
    for algorithm in ("nvls", "nvls-tree"):
        proc, out = run(args, work, algorithm, 2, None, algorithm)
        assert proc.returncode == 0, proc.stderr[-3000:]
        tx, busbw, _ = measured(out)
        check_eighth(tx)
        lines.append(f"{algorithm}: every NIC {min(tx)}..{max(tx)} bytes, busbw {busbw:.1f}")
    return "; ".join(lines)


def case_auto(args, work):
    """`all_reduce: auto` with `protocol: auto`: the plan's pick for each size is what the run
    runs (collectives.csv), the tree in LL for 64 KiB and NVLS-tree in Simple for 1 GiB by the
    model (tests/collectives/tuner_test.cc), NVLS-tree loading every NIC alike."""
    lines = []
    for size, expected in (("64KiB", ("tree", "ll")), ("1GiB", ("nvls-tree", "simple"))):
        name = "auto-" + size
        extra = "  protocol: auto\n"
        config = write_config(args, work, name, 1, 8, "auto", extra, size)
        plan = etwire(args, "plan", config, "--json")
        assert plan.returncode == 0, plan.stderr[-3000:]
        choices = json.loads(plan.stdout)["algorithm_choices"]
        assert len(choices) == 1, choices
        picked = (choices[0]["algorithm"], choices[0]["protocol"])
        assert picked == expected, (size, choices[0])
        proc, out = run(args, work, name, 1, 8, "auto", extra, size)
        assert proc.returncode == 0, proc.stderr[-3000:]
        with open(os.path.join(out, "collectives.csv")) as f:
            rows = list(csv.DictReader(f))
        ran = {(r["algorithm"], r["protocol"]) for r in rows}
        assert ran == {picked}, (size, ran, picked)
        if size == "1GiB":
            tx, _, _ = measured(out)
            check_eighth(tx)
        lines.append(f"{size}: plan and run {picked[0]}/{picked[1]} "
                     f"({choices[0]['model_us'][picked[0]]:.1f} us by the model)")
    return "; ".join(lines)


def case_topology(args, work):
    """hosts.topology: NCCL's topology dump of the servers (tests/cli/data) puts GPU k's rank on
    the NIC of its PCIe switch, numbered apart from the GPUs; the plan places every rank on its
    GPU's NIC of its server, and the eight channels still load every NIC alike near the bound."""
    topology = os.path.abspath(
        os.path.join(args.source_dir, "tests", "cli", "data", "nccl_topo_8gpu_8nic.xml"))
    nic_of_gpu = [3, 2, 1, 0, 4, 5, 7, 6]
    config = write_config(args, work, "topology", 1, 8)
    with open(config) as f:
        text = f.read()
    assert "latency: 1us}" in text, text
    text = text.replace("latency: 1us}", f"latency: 1us, topology: {topology}}}")
    with open(config, "w") as f:
        f.write(text)
    plan = etwire(args, "plan", config, "--json")
    assert plan.returncode == 0, plan.stderr[-3000:]
    doc = json.loads(plan.stdout)
    ports = [r["port"] for r in doc["jobs"][0]["ranks"]]
    expected = [f"n{r // 8 * 8 + nic_of_gpu[r % 8]}" for r in range(16)]
    assert ports == expected, (ports, expected)
    assert [g["nic"] for g in doc["jobs"][0]["topology"]["gpus"]] == nic_of_gpu
    out = os.path.join(work, "results-topology")
    proc = etwire(args, "run", config, "--no-progress", "--out", out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tx, busbw, bound = measured(out)
    check_even(tx, busbw, bound)
    return f"ranks on their GPUs' NICs ({' '.join(ports[:8])} ...); every NIC {min(tx)}..{max(tx)} " \
           f"bytes, busbw {busbw:.1f}"


def case_graph(args, work):
    graph = os.path.abspath(
        os.path.join(args.source_dir, "tests", "cli", "data", "nccl_graph_8gpu_4ch.xml"))
    proc, out = run(args, work, "graph", 1, None, None, f"  graph: {graph}\n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    tx, busbw, _ = measured(out)
    used = [b for i, b in enumerate(tx) if i % 8 < 4]
    idle = [b for i, b in enumerate(tx) if i % 8 >= 4]
    assert min(used) > 0 and max(used) <= 1.05 * min(used), tx
    assert max(idle) < min(used) / 100, tx
    return f"graph of 4 channels: NICs 0-3 {min(used)}..{max(used)} bytes, 4-7 {max(idle)}"


if __name__ == "__main__":
    sys.exit(run_case({"rails": case_rails, "planes": case_planes, "tree": case_tree,
                       "nvls": case_nvls, "graph": case_graph, "auto": case_auto,
                       "topology": case_topology}, "channels"))
