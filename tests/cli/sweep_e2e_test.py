#!/usr/bin/env python3
"""End-to-end tests of `etwire sweep`.

    python3 tests/cli/sweep_e2e_test.py --etwire build/release/etwire --source-dir . --case NAME

Cases:

  twin       configs/loopback-demo.yaml (eight 100G loopback ports on the fabric twin), two
             collectives and four sizes: sweep.json and sweep.csv hold one row per collective and
             size, with the sizes asked for, nccl-tests' count, type, redop and root columns,
             busbw > 0 and busbw / algbw the collective's bus factor; times grow with size; the
             alpha-beta fit's beta (a bus bandwidth) is within a plausible range of the ports'
             goodput; every run left its own results directory, whose instances moved the size;
             each row's per-iteration times (in_place_per_iter) and each series' own file.
  algorithms -a ring,halving-doubling,direct on all_reduce and all_to_all: each collective runs
             the algorithms it supports (the runs' collectives.csv say which ran), the pairs left
             out are said.
  protocols  --set collectives.protocol=auto: each size runs the tuner's pick (LL small, Simple
             large), in sweep.json, sweep.csv and the console table; ll128 runs at every size.
  bad_input  Unknown collective or algorithm, sizes the wrong way round, a step factor below 2,
             sizes that round to nothing, an algorithm for none of the collectives, an invalid
             configuration: exit 2 with a message that names the flag (or the key), and no
             sweep.json.
  stopped    SIGTERM while the sweep runs: exit 130, and sweep.json and sweep.csv are written with
             the sizes that completed and the rest "not run".
"""

import csv
import json
import math
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

RANKS = 8
KIB = 1024
MIB = 1024 * KIB
BUS_FACTOR = {"all_reduce": 2 * (RANKS - 1) / RANKS, "all_gather": (RANKS - 1) / RANKS,
              "all_to_all": (RANKS - 1) / RANKS}
BLOCK_COLLECTIVES = {"all_gather", "all_to_all", "reduce_scatter"}


def sweep(args, *extra, timeout=600):
    config = os.path.join(args.source_dir, "configs/loopback-demo.yaml")
    return subprocess.run([args.etwire, "sweep", config, *extra], capture_output=True, text=True,
                          timeout=timeout)


def load(out):
    with open(os.path.join(out, "sweep.json")) as f:
        doc = json.load(f)
    with open(os.path.join(out, "sweep.csv")) as f:
        rows = list(csv.DictReader(f))
    return doc, rows


def check_row_columns(doc, rows):
    """nccl-tests' columns in sweep.json, the same figures in sweep.csv."""
    assert len(doc["results"]) == len(rows), (len(doc["results"]), len(rows))
    for r, row in zip(doc["results"], rows):
        collective, size = r["collective"], r["size"]
        assert row["collective"] == collective and int(row["size"]) == size, (r, row)
        assert r["type"] == "float" and row["type"] == "float", r
        elements = size // 4 // (RANKS if collective in BLOCK_COLLECTIVES else 1)
        assert r["count"] == elements and int(row["count"]) == elements, (r, elements)
        assert r["redop"] == ("sum" if collective in ("all_reduce", "reduce_scatter") else "none")
        assert int(r["root"]) == -1, r
        assert r["out_of_place"] is None, r
        assert r["status"] == "completed" and row["status"] == "completed", r
        figures = r["in_place"]
        assert figures["time"] > 0 and figures["alg_bw"] > 0 and figures["bus_bw"] > 0, r
        ratio = figures["bus_bw"] / figures["alg_bw"]
        assert math.isclose(ratio, BUS_FACTOR[collective], rel_tol=1e-9), (collective, ratio)
        assert math.isclose(float(row["time_us"]), figures["time"], rel_tol=1e-12), (r, row)
        assert math.isclose(float(row["busbw_GBps"]), figures["bus_bw"], rel_tol=1e-12), (r, row)
        assert r["instances"] == doc["config"]["iterations"], r


def check_per_iteration(doc, r):
    """in_place_per_iter as nccl-tests writes it with -I 1: what its analyzer reads, with the
    types it expects; each iteration's time the slowest rank's."""
    per_iter = r["in_place_per_iter"]
    iterations = doc["config"]["iterations"]
    times = per_iter["times_us"]
    rows = per_iter["per_process_max_times_us"]
    assert len(times) == iterations and len(rows) == RANKS, (len(times), len(rows))
    assert all(len(row) == iterations for row in rows), rows
    assert all(isinstance(t, float) and t > 0 for row in rows for t in row), rows
    for i, t in enumerate(times):
        assert abs(t - max(row[i] for row in rows)) < 0.001, (i, t, rows)
    for key in ("avg_us", "min_us", "max_us", "p99_us", "cv_pct"):
        assert isinstance(per_iter[key], float), (key, per_iter[key])
    assert math.isclose(per_iter["avg_us"], sum(times) / len(times), rel_tol=1e-9), per_iter
    assert per_iter["min_us"] == min(times) and per_iter["max_us"] == max(times), per_iter
    assert per_iter["p99_us"] == max(times), per_iter  # nearest rank of 99 % of 4 samples
    assert per_iter["cv_pct"] >= 0, per_iter
    # A rank's own time runs from its arrival, no later than the last one's: the slowest rank's
    # is at least the CCT (from the last arrival).
    assert per_iter["avg_us"] >= r["in_place"]["time"] * (1 - 1e-9), (per_iter, r["in_place"])


def check_series_files(out, doc):
    """A file per series, as one nccl-tests program writes it, with that series' average; the
    sweep's own average is left empty when it would mix series."""
    assert doc["average_bus_bandwidth"]["bandwidth"] is None, doc["average_bus_bandwidth"]
    assert doc["config"]["aggregated_iterations"] == 1, doc["config"]
    devices = doc["config"]["devices"]
    assert [d["rank"] for d in devices] == list(range(RANKS)), devices
    assert all(isinstance(d["hostname"], str) and d["hostname"] for d in devices), devices
    for fit in doc["fits"]:
        name = f"{fit['collective']}-{fit['algorithm']}"
        series = [r for r in doc["results"] if r["experiment_name"] == name]
        mean = sum(r["in_place"]["bus_bw"] for r in series) / len(series)
        assert math.isclose(fit["average_bus_bandwidth"], mean, rel_tol=1e-9), (fit, mean)
        with open(os.path.join(out, "series", name + ".json")) as f:
            own = json.load(f)
        assert own["version"] == 2 and own["results"] == series, name
        assert [f["collective"] for f in own["fits"]] == [fit["collective"]], own["fits"]
        assert math.isclose(own["average_bus_bandwidth"]["bandwidth"], mean, rel_tol=1e-9), own


def check_console(stdout, doc):
    """As nccl-tests prints it: every line but a measurement starts with '#', a measurement is
    size, count, type, redop, root, time, algbw, busbw (and ideal %), and each series ends with
    its "# Avg bus bandwidth" line."""
    rows = [line.split() for line in stdout.splitlines() if not line.startswith("#")]
    assert len(rows) == len(doc["results"]), stdout
    for fields, r in zip(rows, doc["results"]):
        assert int(fields[0]) == r["size"] and int(fields[1]) == r["count"], (fields, r)
        assert fields[2:5] == [r["type"], r["redop"], r["root"]], (fields, r)
        assert math.isclose(float(fields[7]), r["in_place"]["bus_bw"], abs_tol=0.005), (fields, r)
    averages = [float(line.split(":")[1]) for line in stdout.splitlines()
                if line.startswith("# Avg bus bandwidth")]
    assert len(averages) == len(doc["fits"]), stdout
    for average, fit in zip(averages, doc["fits"]):
        assert math.isclose(average, fit["average_bus_bandwidth"], abs_tol=0.0005), (average, fit)


def check_run_dir(out, r):
    """The run's own results: its measured instances are of the collective and moved the size."""
    run_dir = os.path.join(out, r["run_dir"])
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    assert summary["status"] == "completed", summary["status"]
    measured = [c for c in summary["collectives"] if not c["warmup"]]
    assert len(measured) == r["instances"], (len(measured), r)
    for c in measured:
        assert c["type"] == r["collective"], c
        assert c["algorithm"] == r["algorithm"], c
        assert c["algbw_bytes"] == r["size"], (c["algbw_bytes"], r["size"])
        assert c["group_size"] == RANKS, c


def case_twin(args, work):
    out = os.path.join(work, "sweep")
    proc = sweep(args, "-c", "all_reduce,all_gather", "-b", "64KiB", "-e", "8MiB", "-f", "4",
                 "-n", "4", "-w", "1", "--out", out)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    sizes = [64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB]
    doc, rows = load(out)
    assert doc["config"]["minimum_bytes"] == 64 * KIB and doc["config"]["maximum_bytes"] == 8 * MIB
    assert doc["config"]["step_factor"] == 4 and doc["config"]["ranks"] == RANKS, doc["config"]
    assert doc["config"]["iterations"] == 4 and doc["config"]["warmup_iters"] == 1
    assert len(rows) == 2 * len(sizes), len(rows)
    for collective in ("all_reduce", "all_gather"):
        series = [r for r in doc["results"] if r["collective"] == collective]
        assert [r["size"] for r in series] == sizes, (collective, [r["size"] for r in series])
        assert all(r["algorithm"] == "ring" for r in series), series
        times = [r["in_place"]["time"] for r in series]
        assert times == sorted(times) and len(set(times)) == len(times), (collective, times)
    check_row_columns(doc, rows)
    for r in doc["results"]:
        check_run_dir(out, r)
        check_per_iteration(doc, r)
    check_series_files(out, doc)
    check_console(proc.stdout, doc)
    # The fit: one per series; beta is a bus bandwidth, so it compares with the ports' goodput.
    goodput = doc["config"]["link_goodput_GBps"]
    assert 11 < goodput < 12.5, goodput  # 100 Gb/s less the headers of a 4096-byte MTU
    fits = {f["collective"]: f for f in doc["fits"]}
    assert sorted(fits) == ["all_gather", "all_reduce"], doc["fits"]
    for collective, fit in fits.items():
        assert fit["sizes"] == len(sizes), fit
        assert 0.5 * goodput < fit["beta_GBps"] < 1.05 * goodput, (fit, goodput)
        assert math.isclose(fit["beta_alg_GBps"] * BUS_FACTOR[collective], fit["beta_GBps"],
                            rel_tol=1e-9), fit
        assert fit["alpha_us"] < 100, fit
    # The console: a table per series, the fit, and the progress lines (stderr is not a TTY).
    assert "all_reduce, ring, 8 ranks" in proc.stdout, proc.stdout
    assert "Alpha-beta fit" in proc.stdout, proc.stdout
    assert "sweep: all_gather ring 4 MiB (8/8)" in proc.stderr, proc.stderr
    assert "\r" not in proc.stderr, proc.stderr
    fit = fits["all_reduce"]
    return (f"8 runs; all_reduce fit alpha {fit['alpha_us']:.1f} us, beta {fit['beta_GBps']:.2f} "
            f"GB/s of {goodput:.2f} GB/s goodput")


def case_algorithms(args, work):
    out = os.path.join(work, "sweep")
    proc = sweep(args, "-c", "all_reduce,all_to_all", "-a", "ring,halving-doubling,direct",
                 "-b", "128KiB", "-e", "512KiB", "-n", "2", "-w", "0", "--out", out)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert "note: direct does not run all_reduce" in proc.stderr, proc.stderr
    assert "note: ring does not run all_to_all" in proc.stderr, proc.stderr
    doc, rows = load(out)
    series = sorted({(r["collective"], r["algorithm"]) for r in doc["results"]})
    assert series == [("all_reduce", "halving-doubling"), ("all_reduce", "ring"),
                      ("all_to_all", "direct")], series
    assert len(rows) == 3 * 3, len(rows)
    check_row_columns(doc, rows)
    for r in doc["results"]:
        check_run_dir(out, r)
    return f"{len(rows)} rows: {series}"


def case_protocols(args, work):
    """Under collectives.protocol auto each size runs the tuner's pick, which sweep.json,
    sweep.csv and the console table say; a fixed protocol runs at every size."""
    out = os.path.join(work, "sweep-auto")
    proc = sweep(args, "-b", "4KiB", "-e", "64MiB", "-f", "4", "-n", "1", "-w", "0",
                 "--set", "collectives.protocol=auto", "--out", out)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    doc, rows = load(out)
    picks = [(r["size"], r["protocol"]) for r in doc["results"]]
    assert [r["protocol"] for r in rows] == [p for _, p in picks], (rows, picks)
    # Eight single-rank servers at 100 Gb/s: LL for the small sizes, Simple for the largest.
    assert picks[0][1] == "ll" and picks[-1][1] == "simple", picks
    assert "protocol" in proc.stdout, proc.stdout[-2000:]
    fixed = os.path.join(work, "sweep-ll128")
    proc = sweep(args, "-b", "64KiB", "-e", "1MiB", "-f", "4", "-n", "1", "-w", "0",
                 "--set", "collectives.protocol=ll128", "--out", fixed)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    doc, rows = load(fixed)
    assert {r["protocol"] for r in doc["results"]} == {"ll128"}, doc["results"]
    return "auto: " + ", ".join(f"{size} {p}" for size, p in picks) + "; ll128 at every size"


def case_tuned(args, work):
    """-a ring,auto: the auto series runs the tuner's pick per size, which sweep.csv, sweep.json
    and the console give and each run's collectives.csv confirms. On eight single-rank servers
    the all-gather takes PAT while small and the ring when large (the model's crossover is near
    2.6 MB); a collective NCCL has one algorithm for is left out of the auto series with a note."""
    out = os.path.join(work, "sweep-tuned")
    proc = sweep(args, "-c", "all_gather,broadcast", "-a", "ring,auto", "-b", "4KiB",
                 "-e", "16MiB", "-f", "16", "-n", "1", "-w", "0", "--out", out)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    doc, rows = load(out)
    tuned = [r for r in rows if r["series"] == "all_gather-auto"]
    assert [r["algorithm"] for r in tuned] == ["pat", "pat", "pat", "ring"], tuned
    assert {r["series"] for r in rows} == {"all_gather-ring", "all_gather-auto",
                                           "broadcast-ring"}, rows
    for r in tuned:
        with open(os.path.join(out, r["run_dir"], "collectives.csv")) as f:
            ran = {c["algorithm"] for c in csv.DictReader(f)}
        assert ran == {r["algorithm"]}, (r, ran)
    names = {r["experiment_name"] for r in doc["results"]}
    assert "all_gather-auto" in names, names
    assert os.path.exists(os.path.join(out, "series", "all_gather-auto.json"))
    assert "# all_gather, auto, 8 ranks" in proc.stdout, proc.stdout[-3000:]
    assert "note: auto does not run broadcast" in proc.stderr, proc.stderr[-3000:]
    return "all_gather auto: " + ", ".join(f"{r['size']} {r['algorithm']}" for r in tuned)


def case_bad_input(args, work):
    out = os.path.join(work, "sweep")
    cases = [
        (["-c", "all_reduce,allreduse"], "-c/--collectives: unknown collective \"allreduse\""),
        (["-c", "barrier"], "-c/--collectives: barrier moves no payload"),
        (["-a", "rung"], "-a/--algorithms: unknown algorithm \"rung\""),
        (["-c", "all_to_all", "-a", "ring"], "-a/--algorithms: none of them runs"),
        (["-b", "64MiB", "-e", "1KiB"], "-b/--min-bytes 64MiB is above -e/--max-bytes 1KiB"),
        (["-f", "1"], "-f/--step-factor 1: expected 2 or more"),
        # Taken as 2^64 - 2 before; and a TiB buffer ran for days.
        (["-f", "-2"], "--step-factor: -2: expected 2 or more"),
        (["-e", "1TiB"], "-e/--max-bytes 1TiB: at most 16 GiB"),
        (["-b", "lots"], "-b/--min-bytes: \"lots\" is not a byte size"),
        (["-c", "all_gather", "-b", "8", "-e", "64"],
         "every size rounds to 0 bytes for all_gather over 8 ranks"),
        (["-n", "0"], "-n/--iterations"),
        (["--set", "ports[0].speed=fast"], "ports[0].speed: expected a rate"),
    ]
    for extra, message in cases:
        proc = sweep(args, *extra, "--out", out, timeout=60)
        assert proc.returncode == 2, (extra, proc.returncode, proc.stderr)
        assert message in proc.stderr, (extra, message, proc.stderr)
        assert not os.path.exists(os.path.join(out, "sweep.json")), extra
        assert not os.path.exists(os.path.join(out, "runs")), extra
    return f"{len(cases)} refusals"


def case_stopped(args, work):
    out = os.path.join(work, "sweep")
    config = os.path.join(args.source_dir, "configs/loopback-demo.yaml")
    proc = subprocess.Popen([args.etwire, "sweep", config, "-b", "1KiB", "-e", "64MiB", "-n", "50",
                             "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    runs = os.path.join(out, "runs")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.isdir(runs) and len(os.listdir(runs)) >= 2:
            break
        time.sleep(0.01)
    assert proc.poll() is None, f"the sweep ended before it could be stopped: {proc.stderr.read()}"
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, stderr[-2000:])
    doc, rows = load(out)
    statuses = [r["status"] for r in doc["results"]]
    assert statuses.count("completed") >= 1, statuses
    assert statuses[-1] == "not run", statuses
    assert len(rows) == len(statuses), (len(rows), len(statuses))
    # On the console a size that measured nothing is a comment: nccl-tests' readers skip it.
    measurements = [line for line in stdout.splitlines() if not line.startswith("#")]
    assert len(measurements) == sum(1 for r in doc["results"] if r["in_place"]), stdout
    return (f"stopped by SIGTERM: {statuses.count('completed')} sizes completed, "
            f"{statuses.count('not run')} not run, sweep.json and sweep.csv written")


CASES = {"twin": case_twin, "algorithms": case_algorithms, "protocols": case_protocols,
         "tuned": case_tuned, "bad_input": case_bad_input, "stopped": case_stopped}


def main():
    return run_case(CASES, "sweep")


if __name__ == "__main__":
    sys.exit(main())
