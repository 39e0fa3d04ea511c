#!/usr/bin/env python3
"""End-to-end tests of `etwire run --repeat N` and of `etwire compare` on its results.

    python3 tests/cli/repeat_e2e_test.py --etwire build/release/etwire --source-dir . --case NAME

Cases:

  twin          configs/twin-congestion.yaml (RED marks by chance) run 3 times: repeat K in
                <out>/repeat-K with run.seed + K - 1 (its summary.json says so), repeats.json lists
                the three in order, the seeds make the runs differ, the spread table's mean of the
                mean CCT is the mean of the three summaries' own; `etwire compare OUT OUT` reads
                the directory as three runs a side (a_runs, b_runs 3 in its JSON, with their sample
                standard deviation).
  dpdk_predict  configs/dpdk-ring.yaml with --predict --repeat 3: <out>/prediction/repeat-1..3 on
                the twin, <out>/repeat-1..3 on the net_ring ports, each listed and complete; the
                prediction's repeats agree exactly (the twin draws nothing here), and `etwire
                compare OUT/prediction OUT` compares 3 runs a side with a confidence interval on
                every metric the measurements spread on.
  refusals      --repeat 0 and 1001 are refused; a repeated run into a directory holding a single
                run's summary.json is refused before anything runs, as is a single run into a
                series' directory; compare refuses a directory holding both, and a repeats.json
                that names a directory outside its series, each naming the file.
  interrupted   SIGINT once repeat 1 of 3 is done (slowed with --time-scale): exit 130, the series
                stops, repeats.json lists repeat 1 (and repeat 2 if the signal landed in it and it
                wrote its results, with its exit code), and compare still reads the directory,
                warning of the repeat that did not complete.
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

SKIP = 77


def etwire(args, *argv, timeout=300):
    return subprocess.run([args.etwire, *argv], capture_output=True, text=True, timeout=timeout)


def run(args, *argv, timeout=300):
    return etwire(args, "run", *argv, "--no-metrics", "--no-progress", timeout=timeout)


def load(path):
    with open(path) as f:
        return json.load(f)


def mean_cct_us(summary):
    values = [c["cct_ns"] / 1e3 for c in summary["collectives"] if not c["warmup"]]
    assert values, "no measured collective"
    return statistics.mean(values)


def compare_json(args, work, a, b, *extra):
    path = os.path.join(work, "compare.json")
    proc = etwire(args, "compare", a, b, "--json", path, *extra, timeout=60)
    return proc, (load(path) if os.path.exists(path) else None)


def metric(doc, section, name):
    rows = [m for m in doc["metrics"] if m["section"] == section and m["metric"] == name]
    assert rows, (section, name)
    return rows[0]


def case_twin(args, work):
    out = os.path.join(work, "series")
    config = os.path.join(args.source_dir, "configs/twin-congestion.yaml")
    proc = run(args, config, "--repeat", "3", "--out", out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    listed = load(os.path.join(out, "repeats.json"))
    assert listed["planned"] == 3, listed
    assert [r["dir"] for r in listed["runs"]] == ["repeat-1", "repeat-2", "repeat-3"], listed
    base = listed["runs"][0]["seed"]
    summaries = []
    for k, entry in enumerate(listed["runs"], start=1):
        assert entry["seed"] == base + k - 1 and entry["exit_code"] == 0, entry
        summary = load(os.path.join(out, f"repeat-{k}", "summary.json"))
        assert summary["run"]["seed"] == entry["seed"], (summary["run"], entry)
        assert summary["status"] == "completed", summary["status"]
        assert f"repeat {k} of 3 (seed {entry['seed']}): completed" in proc.stdout, proc.stdout
        summaries.append(summary)
    ccts = [mean_cct_us(s) for s in summaries]
    assert len(set(ccts)) > 1, f"the seeds changed nothing: {ccts}"
    # The spread table: the mean CCT's mean over the repeats, as the console prints it.
    row = [line for line in proc.stdout.splitlines() if line.split()[:2] == ["all_reduce", "cct"]]
    assert row, proc.stdout
    assert abs(float(row[0].split()[3]) - statistics.mean(ccts)) < 0.01, (row, ccts)
    compare, doc = compare_json(args, work, out, out, "--tolerance", "1")
    assert compare.returncode == 0, (compare.returncode, compare.stderr)
    cct = metric(doc, "collectives", "cct")
    assert cct["a_runs"] == 3 and cct["b_runs"] == 3, cct
    assert abs(cct["a_sd"] - statistics.stdev(ccts)) < 1e-3, (cct, ccts)
    assert len(doc["a_dirs"]) == 3, doc["a_dirs"]
    return f"3 repeats, mean CCT {statistics.mean(ccts):.2f} +- {statistics.stdev(ccts):.2f} us"


def case_dpdk_predict(args, work):
    out = os.path.join(work, "out")
    proc = run(args, os.path.join(args.source_dir, "configs/dpdk-ring.yaml"), "--predict",
               "--repeat", "3", "--out", out)
    if proc.returncode != 0 and "EAL" in proc.stderr:
        print(f"skipped: DPDK cannot start here: {proc.stderr[-500:]}")
        sys.exit(SKIP)
    assert proc.returncode == 0, proc.stderr[-3000:]
    predicted = []
    for side in (os.path.join(out, "prediction"), out):
        listed = load(os.path.join(side, "repeats.json"))
        assert [r["repeat"] for r in listed["runs"]] == [1, 2, 3], listed
        runs = [load(os.path.join(side, f"repeat-{k}", "summary.json")) for k in (1, 2, 3)]
        for s in runs:
            assert s["status"] == "completed", s["status"]
        if side != out:
            predicted = runs
    # Nothing in this twin is drawn at random: the seeds change no figure of the prediction.
    assert len({mean_cct_us(s) for s in predicted}) == 1, [mean_cct_us(s) for s in predicted]
    compare, doc = compare_json(args, work, os.path.join(out, "prediction"), out)
    assert compare.returncode == 0, (compare.returncode, compare.stderr)
    assert doc["a"]["label"] == "prediction" and doc["b"]["label"] == "out", (doc["a"], doc["b"])
    cct = metric(doc, "collectives", "cct")
    assert cct["a_runs"] == 3 and cct["b_runs"] == 3 and cct["a_sd"] == 0, cct
    # Measured on the wall clock, the runs spread; the interval then brackets the delta.
    if cct["b_sd"] > 0:
        low, high = cct["delta_percent_ci95"]
        assert low < cct["delta_percent"] < high, cct
    return (f"predicted CCT {cct['a']:.1f} us, measured {cct['b']:.1f} +- {cct['b_sd']:.1f} us "
            f"over 3 runs")


def case_refusals(args, work):
    demo = os.path.join(args.source_dir, "configs/loopback-demo.yaml")
    for count in ("0", "1001"):
        proc = run(args, demo, "--repeat", count, "--out", os.path.join(work, "none"))
        assert proc.returncode != 0 and "--repeat" in proc.stderr, (count, proc.stderr)
    assert not os.path.exists(os.path.join(work, "none"))
    single = os.path.join(work, "single")
    assert run(args, demo, "--out", single).returncode == 0
    proc = run(args, demo, "--repeat", "2", "--out", single)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"{single}/summary.json: holds the results of a single run" in proc.stderr, proc.stderr
    assert not os.path.exists(os.path.join(single, "repeat-1")), "a repeat ran"
    series = os.path.join(work, "series")
    assert run(args, demo, "--repeat", "2", "--out", series).returncode == 0
    proc = run(args, demo, "--out", series)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"{series}/repeats.json: holds the repeats of an earlier" in proc.stderr, proc.stderr
    assert not os.path.exists(os.path.join(series, "summary.json")), "the single run wrote"
    # A directory holding both: compare cannot tell which to read.
    both = os.path.join(work, "both")
    os.makedirs(both)
    for name in ("repeats.json", "summary.json"):
        with open(os.path.join(both, name), "w") as f:
            with open(os.path.join(series if name == "repeats.json" else single, name)) as src:
                f.write(src.read())
    proc = etwire(args, "compare", both, single, timeout=60)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"{both}/repeats.json: the directory holds both" in proc.stderr, proc.stderr
    # A repeats.json that names a directory outside the series is refused, not followed.
    listed = load(os.path.join(series, "repeats.json"))
    listed["runs"][1]["dir"] = "../single"
    with open(os.path.join(series, "repeats.json"), "w") as f:
        json.dump(listed, f)
    proc = etwire(args, "compare", series, single, timeout=60)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert 'repeats.json: runs[1].dir: expected "repeat-2"' in proc.stderr, proc.stderr
    return proc.stderr.strip().splitlines()[-1]


def case_interrupted(args, work):
    out = os.path.join(work, "series")
    # The demo's 7.8 ms of virtual time at 1/500 of real time: some 4 s of wall clock a repeat.
    proc = subprocess.Popen([args.etwire, "run", os.path.join(args.source_dir,
                                                              "configs/loopback-demo.yaml"),
                             "--repeat", "3", "--out", out, "--time-scale", "0.002",
                             "--no-metrics", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("repeat 1 of 3"):
            break
    time.sleep(1)  # into repeat 2, most likely
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, stderr)
    assert "repeat 3 of 3" not in stdout, stdout
    assert "so the series stops" in stderr and "repeats.json lists the" in stderr, stderr
    listed = load(os.path.join(out, "repeats.json"))
    assert listed["runs"][0] == {"repeat": 1, "dir": "repeat-1", "seed": 1, "exit_code": 0}, listed
    # The signal may land in repeat 2 (which then writes its interrupted results) or just before it.
    assert len(listed["runs"]) in (1, 2), listed
    if len(listed["runs"]) == 2:
        assert listed["runs"][1]["exit_code"] == 130, listed
    compare = etwire(args, "compare", out, out, timeout=60)
    assert compare.returncode == 0, (compare.returncode, compare.stderr)
    if len(listed["runs"]) == 2:
        assert "repeat-2) did not complete: status interrupted" in compare.stderr, compare.stderr
    return f"stopped in repeat 2; {len(listed['runs'])} listed"


CASES = {"twin": case_twin, "dpdk_predict": case_dpdk_predict, "refusals": case_refusals,
         "interrupted": case_interrupted}


def main():
    return run_case(CASES, "repeat")


if __name__ == "__main__":
    sys.exit(main())
