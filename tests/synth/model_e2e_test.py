#!/usr/bin/env python3
"""End-to-end tests of `etwire synth model` and `etwire synth moe-mix`: the trace sets they write
are accepted by `etwire inspect` (every process group consistent) and replayed to completion by
`etwire run` on loopback ports and the fabric twin.

    python3 tests/synth/model_e2e_test.py --etwire build/release/etwire --source-dir . --case NAME

Cases:

  dense       8 ranks, dp 2 x tp 2 x pp 2, 4 layers, 4 micro-batches per step (1F1B), bucketed
              gradient all-reduces: inspect finds 8 ranks and 4 TP and 4 DP groups, every one
              consistent, the per-rank counts the summary printed; the run completes.
  moe         The moe-small preset on 8 ranks, dp 4 x tp 2 with sequence parallelism, ep 4, two
              iterations: TP, DP, EP and expert-data-parallel groups, all consistent; the run
              completes with all-to-alls among its collectives.
  moe_mix     `synth moe-mix` on 8 ranks, 2 all-reduces and 4 all-to-alls per iteration: both
              groups consistent; the run completes with both kinds of collective.
  presets     A preset sets the shape and explicit flags override it: mixtral-8x7b cut to 2 layers
              has the parameters its formula gives, and fewer with --no-gated-mlp.
  bad_input   Layouts that cannot exist, and shapes past the cap on nodes written, exit 2 with
              a message naming the flag, and write nothing.
  write_failure  A write that fails half-way (a file size limit) leaves nothing at the prefix.

Exit 77 (skipped) when the etwire binary has not been built.
"""

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

SKIP = 77

# A loopback run of every rank of one trace set, modeled on configs/loopback-demo.yaml: rank r on
# port host<r>, all ports on one switch of the fabric twin.
CONFIG = """\
run:
  name: {name}
  seed: 1
workload:
  iterations: 1
  jobs:
    - name: {name}
      trace: {trace}
      comm_groups: {groups}
      world_size: {ranks}
ports:
  - name: host
    count: {ranks}
    backend: loopback
    speed: 100Gbps
    mtu: 4200
mapping:
  jobs:
    - job: {name}
      placement: block
      ranks_per_port: 1
transport:
  op: write-with-imm
  pmtu: auto
fabric:
  topology: single-switch
  propagation_delay: 1us
  switch_latency: 500ns
telemetry:
  output_dir: {out}
"""


def etwire(args, *argv, timeout=300):
    return subprocess.run([args.etwire, *argv], capture_output=True, text=True, timeout=timeout)


def synth(args, *argv):
    proc = etwire(args, "synth", *argv)
    assert proc.returncode == 0, f"synth failed ({proc.returncode}): {proc.stderr[-3000:]}"
    return proc.stdout


def inspect(args, prefix, expect_ranks):
    proc = etwire(args, "inspect", prefix, "--comm-groups", prefix + ".comm_groups.json",
                  "--json")
    assert proc.returncode == 0, f"inspect failed: {proc.stderr[-3000:]}"
    summary = json.loads(proc.stdout)
    assert summary["world_size"] == expect_ranks, summary["world_size"]
    groups = summary["process_groups"]
    assert groups, "no process group"
    for g in groups:
        assert g["consistent"], f"group {g} is not consistent"
    return summary


def replay(args, work, name, prefix, ranks):
    out = os.path.join(work, "results-" + name)
    config = os.path.join(work, name + ".yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(name=name, trace=prefix, groups=prefix + ".comm_groups.json",
                              ranks=ranks, out=out))
    proc = etwire(args, "run", config, "--no-metrics")
    assert proc.returncode == 0, f"run failed ({proc.returncode}): {proc.stderr[-3000:]}"
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    assert summary["status"] == "completed", summary["status"]
    return summary


def collective_types(run_summary):
    return {c["type"] for c in run_summary["collectives"]}


def case_dense(args, work):
    prefix = os.path.join(work, "dense", "m")
    out = synth(args, "model", "-o", prefix, "--dp", "2", "--tp", "2", "--pp", "2", "--layers",
                "4", "--hidden", "256", "--seq-len", "128", "--global-batch", "8",
                "--bucket", "256KiB")
    assert "8 rank files" in out and "tp  4 groups of 2 ranks" in out, out
    summary = inspect(args, prefix, 8)
    kinds = sorted(len(g["members"]) for g in summary["process_groups"])
    assert kinds == [2] * 8, kinds
    # The summary's counts are the files': 2 layers per stage x 4 micro-batches x 4 all-reduces
    # of the tensor-parallel group, plus the gradient buckets.
    for rank in summary["ranks"]:
        ar = rank["collectives"]["ALL_REDUCE"]["count"]
        assert ar > 2 * 4 * 4, (rank["rank"], ar)
    run = replay(args, work, "dense", prefix, 8)
    assert collective_types(run) >= {"all_reduce", "send_recv"}, collective_types(run)
    return f"{len(run['collectives'])} collective instances replayed"


def case_moe(args, work):
    prefix = os.path.join(work, "moe", "m")
    synth(args, "model", "-o", prefix, "--preset", "moe-small", "--dp", "4", "--tp", "2", "--sp",
          "--ep", "4", "--iterations", "2")
    summary = inspect(args, prefix, 8)
    # tp: 4 groups of 2; dp: 2 groups of 4; ep: 2 groups of 4; edp: 4 groups of 2.
    sizes = sorted(len(g["members"]) for g in summary["process_groups"])
    assert sizes == [2] * 8 + [4] * 4, sizes
    run = replay(args, work, "moe", prefix, 8)
    assert collective_types(run) >= {"all_to_all", "all_gather", "reduce_scatter", "all_reduce"}, \
        collective_types(run)
    return f"{len(run['collectives'])} collective instances replayed"


def case_moe_mix(args, work):
    prefix = os.path.join(work, "mix", "m")
    synth(args, "moe-mix", "-o", prefix, "-n", "8", "--allreduce-bytes", "1MiB",
          "--alltoall-bytes", "256KiB", "--allreduce-count", "2", "--alltoall-count", "4",
          "--compute-us", "20")
    summary = inspect(args, prefix, 8)
    assert len(summary["process_groups"]) == 2, summary["process_groups"]
    run = replay(args, work, "mix", prefix, 8)
    types = [c["type"] for c in run["collectives"]]
    assert types.count("all_reduce") == 2 and types.count("all_to_all") == 4, types
    return f"{len(types)} collective instances replayed"


def case_presets(args, work):
    base = ["model", "--preset", "mixtral-8x7b", "--layers", "2", "--seq-len", "256", "--dp",
            "8", "--ep", "8"]
    # Per layer: attention 2 h^2 + 2 h (h / 4) (8 of 32 heads for K and V), 8 experts of 3 x h x
    # ffn, a router of h x 8; h = 4096, ffn = 14336.
    attention = 2 * 4096 * 4096 + 2 * 4096 * 1024
    router = 4096 * 8
    out = synth(args, *base, "-o", os.path.join(work, "gated", "m"))
    assert "2.90G parameters in 2 MoE layers" in out, out
    assert 2 * (attention + 8 * 3 * 4096 * 14336 + router) == 2902523904
    out = synth(args, *base, "--no-gated-mlp", "-o", os.path.join(work, "plain", "m"))
    assert "1.96G parameters in 2 MoE layers" in out, out
    assert 2 * (attention + 8 * 2 * 4096 * 14336 + router) == 1962999808
    return "preset and overrides applied"


def case_bad_input(args, work):
    cases = [
        (["model", "--layers", "3", "--pp", "2"], "--layers"),
        (["model", "--dp", "2", "--tp", "2", "--ep", "3"], "--ep"),
        (["model", "--dp", "4", "--global-batch", "6"], "--global-batch"),
        (["model", "--tp", "0"], "--tp"),
        (["model", "--dp", "2", "--tp", "2", "--ep", "2"], "--sp"),
        (["model", "--preset", "no-such-model"], "--preset"),
        (["model", "--bucket", "lots"], "--bucket"),
        (["moe-mix", "--allreduce-count", "0", "--alltoall-count", "0"], "--alltoall-count"),
        # Sizes past any model's: they wrapped the 64-bit counts ("0 parameters") or ran out of
        # memory (std::bad_alloc, exit 1).
        (["model", "--dp", "2", "--hidden", "4294967296"], "--hidden"),
        (["model", "--layers", "2000000000"], "--layers"),
        (["model", "--iterations", "4000000000"], "--iterations"),
        (["model", "--seq-len", "4294967296000"], "--seq-len"),
        (["model", "--layers", "65536", "--hidden", "1048576"], "--hidden"),
        (["model", "--ep", "2", "--dp", "2", "--capacity-factor", "1e300"], "--capacity-factor"),
    ]
    for argv, flag in cases:
        prefix = os.path.join(work, "bad", "m")
        proc = etwire(args, "synth", *argv, "-o", prefix)
        assert proc.returncode == 2, (argv, proc.returncode, proc.stderr)
        assert flag in proc.stderr, (argv, proc.stderr)
        assert not os.path.exists(os.path.dirname(prefix)), f"{argv} wrote files"
    # Shapes past the cap on nodes written are refused before anything is written (before, the
    # first ran until the disk was full).
    caps = [(["graph", "-N", str(1 << 40), "-n", str(1 << 20)], "--nodes"),
            (["graph", "-N", str((1 << 27) + 1), "-n", "2"], "--nodes"),
            (["microbench", "-n", str(1 << 20), "-i", "100000000"], "--iterations"),
            (["moe-mix", "-n", "1024", "-i", "4000000000"], "--iterations")]
    for argv, flag in caps:
        prefix = os.path.join(work, "big", "m")
        proc = etwire(args, "synth", *argv, "-o", prefix, timeout=20)
        assert proc.returncode == 2, (argv, proc.returncode, proc.stderr)
        assert flag in proc.stderr and "at most" in proc.stderr, (argv, proc.stderr)
        assert not os.path.exists(os.path.dirname(prefix)), f"{argv} wrote files"
    return f"{len(cases) + len(caps)} bad inputs refused"


def case_write_failure(args, work):
    """A write that fails half-way leaves nothing at the prefix (before, the rank files written
    so far and a truncated one were left): every file goes to a temporary directory beside it
    and is renamed into place at the end."""
    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))
    out = os.path.join(work, "failed")
    os.makedirs(out)
    for argv in (["microbench", "-n", "4", "-i", "100"], ["moe-mix", "-n", "4", "-i", "50"]):
        proc = subprocess.run([args.etwire, "synth", *argv, "-o", os.path.join(out, "m")],
                              capture_output=True, text=True, timeout=60, preexec_fn=small_files)
        assert proc.returncode == 1, (argv, proc.returncode, proc.stderr)
        assert "write failed" in proc.stderr, proc.stderr
        assert os.listdir(out) == [], f"{argv} left {sorted(os.listdir(out))}"
    synth(args, "microbench", "-n", "2", "-o", os.path.join(out, "m"))
    assert sorted(os.listdir(out)) == ["m.0.et", "m.1.et"], sorted(os.listdir(out))
    return "a failed write left nothing; a whole one is in place"


CASES = {"dense": case_dense, "moe": case_moe, "moe_mix": case_moe_mix,
         "presets": case_presets, "bad_input": case_bad_input,
         "write_failure": case_write_failure}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    args = parser.parse_args()
    if not os.access(args.etwire, os.X_OK):
        print(f"skipped: {args.etwire} is not built")
        return SKIP
    work = tempfile.mkdtemp(prefix=f"etwire-synth-{args.case}-")
    try:
        print(f"{args.case}: {CASES[args.case](args, work)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
