#!/usr/bin/env python3
"""Makes the tables of docs/dut-validation.md that rest on a recorded sitting of lab runs.

    scripts/dut-validation.py [--etwire BIN] [--record FILE] [--tbf-record FILE]
                              [--check DOC | --write DOC]

The lab's figures (the ns-3 router's runs at three operating points, and their predictions as
sent and calibrated, which replay the lab's own captures) come from a recorded sitting,
--record (default docs/data/ns3-red-2026-12-02.jsonl): the lines `tests/dut/dut_e2e_test.py
--case ns3_red_ecn --record FILE [--ns3-qw Q] [--ns3-point P]` appends, dated by the file's
name. The ideal sender's prediction is the fabric twin's, run today from the configuration the
test builds with its ports on the twin (about 10 s): a change that moves it leaves the page
stale until it is rewritten. The tbf bridge's runs come likewise from --tbf-record (default
docs/data/tbf-bridge-2026-12-02.jsonl, `--case tbf_incast --record FILE`), with the twin's
prediction of the case run today. Without --check or --write the tables are printed.

--write DOC   replaces the generated sections of DOC with today's.
--check DOC   exits 1 naming each generated section of DOC that differs from today's.

ETWIRE or --etwire names the binary (default build/release/etwire).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from types import SimpleNamespace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "dut"))
sys.path.insert(0, os.path.join(ROOT, "tests", "testing"))
import generated_page  # noqa: E402  (beside this script)
from ns3_cases import NS3_POINTS, ns3_config  # noqa: E402
from tbf_cases import tbf_config, tbf_trace  # noqa: E402

TOOL = "dut-validation"
SECTIONS = ["tbf_as_sent", "ns3_as_sent", "ns3_ideal_sender"]
RECORD = os.path.join(ROOT, "docs", "data", "ns3-red-2026-12-02.jsonl")
TBF_RECORD = os.path.join(ROOT, "docs", "data", "tbf-bridge-2026-12-02.jsonl")
POINT_NAMES = {("case", 1.0): "case", ("case", 0.002): "averaged", ("lossy", 1.0): "shallow"}


def on_the_twin(text):
    """A lab configuration of the ns-3 case with its ports on the twin, as run --predict makes
    it: loopback ports without their DPDK settings and next hops, no DPDK section, no capture."""
    text = re.sub(r"^dpdk:\n(  .*\n)+", "", text, flags=re.M)
    text = re.sub(r"^    (dpdk|next_hop_mac): .*\n", "", text, flags=re.M)
    text = text.replace("backend: dpdk", "backend: loopback")
    return text.replace("record: {pcap: true}", "record: {pcap: false}")


def run_on_the_twin(etwire, lab, out, *more):
    """The twin's run of a lab configuration (its path): its summary.json."""
    with open(lab) as f:
        text = on_the_twin(f.read())
    config = os.path.join(os.path.dirname(lab), "twin.yaml")
    with open(config, "w") as f:
        f.write(text)
    proc = subprocess.run([etwire, "run", config, "--no-progress", "--no-metrics", *more],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"{TOOL}: the twin's run of {lab} failed ({proc.returncode}):\n"
                 f"{proc.stderr[-2000:]}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def predict(etwire, work, trace, point, qw, dcqcn, seed):
    """The twin's prediction of one run: (gather ms, CE marks received at rx, retransmitted)."""
    spec = NS3_POINTS[point]
    out = os.path.join(work, f"{point}-{qw}-{dcqcn}-{seed}")
    lab = ns3_config(work, trace, out, ["02:00:00:00:00:10", "02:00:00:00:00:11"], dcqcn=dcqcn,
                     bottleneck_bps=spec["bottleneck_bps"], sender_bps=60_000_000,
                     red={**spec["red"], "qw": qw})
    summary = run_on_the_twin(etwire, lab, out, "--set", f"run.seed={seed}")
    return (summary["collectives"][0]["cct_ns"] / 1e6, summary["ports"][0]["ecn_marked_received"],
            sum(p["retransmitted_packets"] for p in summary["ports"]))


def pct(lab, other):
    return f"{100 * (other - lab) / lab:+.1f} %" if lab else ("0" if other == 0 else "new")


def count(n):
    return f"{n:,}"


def ns3_ideal(etwire, work, rows):
    """Each recorded run with the twin's ideal-sender prediction of it, run today: (row, seed,
    prediction)."""
    trace = os.path.join(work, "gather")
    subprocess.run([etwire, "synth", "microbench", "-c", "gather", "-b", "4MiB", "-n", "2", "-i",
                    "1", "-o", trace], check=True, capture_output=True)
    seen, out = {}, []
    for r in rows:
        key = (r["point"], r["qw"], r["run"] == "dcqcn_on")
        seen[key] = seen.get(key, 0) + 1
        seed = seen[key] if key[2] else 1
        out.append((r, seed, predict(etwire, work, trace, r["point"], r["qw"], key[2], seed)))
    return out


def ns3_findings(runs):
    """What the page reads from the ideal sender's column: its time off the lab's with DCQCN on
    and off, its retransmissions with DCQCN off, and where it is within 20 % with DCQCN off."""
    on = [100 * (p[0] - r["cct_ms"]) / r["cct_ms"] for r, _, p in runs if r["run"] == "dcqcn_on"]
    off = [(POINT_NAMES[r["point"], r["qw"]], r, p) for r, _, p in runs if r["run"] == "dcqcn_off"]
    within = [f"{name} ({pct(r['cct_ms'], p[0])})" for name, r, p in off
              if abs(p[0] - r["cct_ms"]) <= 0.2 * r["cct_ms"]]
    beyond = [f"{name} ({pct(r['cct_ms'], p[0])})" for name, r, p in off
              if abs(p[0] - r["cct_ms"]) > 0.2 * r["cct_ms"]]
    off_times = ", ".join(f"{pct(r['cct_ms'], p[0])} ({name})" for name, r, p in off)
    retransmitted = "; ".join(f"{name} {count(p[2])} against {count(r['retransmitted'])} "
                              f"({pct(r['retransmitted'], p[2])})" for name, r, p in off)
    return (f"- **The ideal sender's time** is {min(abs(x) for x in on):.0f} to "
            f"{max(abs(x) for x in on):.0f} % off the lab's with DCQCN on, and "
            f"{off_times} with it off.\n"
            f"- **Its retransmissions with DCQCN off**, against the lab's: {retransmitted}.\n"
            f"- **DCQCN off within 20 %**, ideal sender: "
            f"{', '.join(within) if within else 'nowhere'}; beyond it: "
            f"{', '.join(beyond) if beyond else 'nowhere'}.\n")


def ns3_table(runs):
    lines = ["| point | run | lab | ideal sender | as sent | calibrated | CE lab | ideal | as sent "
             "| calibrated | lost lab | as sent | calibrated |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r, seed, (ideal_ms, ideal_ce, _) in runs:
        key = (r["point"], r["qw"])
        on = r["run"] == "dcqcn_on"
        lab_ms = r["cct_ms"]
        lab_last = r["as_sent_lab_last_ms"]
        lab_time = f"{lab_ms:.0f} ms" if lab_ms < 10_000 else f"{lab_ms / 1000:.1f} s"
        lost = r["as_sent_lab_lost"]
        lost_cells = [count(r[f"{p}_twin_lost"]) if lost < 1000 else pct(lost, r[f"{p}_twin_lost"])
                      for p in ("as_sent", "calibrated")]
        lines.append(
            f"| {POINT_NAMES[key]} | {'on ' + str(seed) if on else 'off'} | {lab_time} | "
            f"{pct(lab_ms, ideal_ms)} | {pct(lab_last, r['as_sent_twin_last_ms'])} | "
            f"{pct(lab_last, r['calibrated_twin_last_ms'])} | {count(r['as_sent_lab_ce'])} | "
            f"{pct(r['ecn_marked_received'], ideal_ce)} | "
            f"{pct(r['as_sent_lab_ce'], r['as_sent_twin_ce'])} | "
            f"{pct(r['as_sent_lab_ce'], r['calibrated_twin_ce'])} | {count(lost)} | "
            f"{lost_cells[0]} | {lost_cells[1]} |")
    return "\n".join(lines) + "\n"


def tbf_table(etwire, work, rows):
    """The tbf bridge's recorded runs: the lab's gather and drops beside the ideal sender's
    prediction (run today) and the two predictions as sent, through a link at the shaper's rate
    (the case's twin) and through the shaper modelled as tbf is (rate, burst and limit)."""
    trace = tbf_trace(SimpleNamespace(etwire=etwire), work)
    out = os.path.join(work, "tbf-out")
    macs = [f"02:00:00:00:00:1{i}" for i in range(4)]
    ideal = run_on_the_twin(etwire, tbf_config(work, trace, out, macs), out)
    ideal_ms = ideal["collectives"][0]["cct_ns"] / 1e6
    ideal_resent = sum(p["retransmitted_packets"] for p in ideal["ports"])
    lines = ["| run | gather, lab | ideal sender | dropped, lab | as sent, link at the rate | "
             "as sent, tbf model | last arrival, as sent | tbf model | retransmitted, lab | "
             "ideal sender |", "|---|---|---|---|---|---|---|---|---|---|"]
    for n, r in enumerate(rows, 1):
        lab_last = r["as_sent_lab_last_ms"]
        lines.append(
            f"| {n} | {r['cct_ms']:.0f} ms | {pct(r['cct_ms'], ideal_ms)} | "
            f"{count(r['shaper_dropped'])} | {pct(r['as_sent_lab_lost'], r['as_sent_twin_lost'])} "
            f"| {pct(r['tbf_model_lab_lost'], r['tbf_model_twin_lost'])} | "
            f"{pct(lab_last, r['as_sent_twin_last_ms'])} | "
            f"{pct(lab_last, r['tbf_model_twin_last_ms'])} | {count(r['etwire_retransmitted'])} | "
            f"{count(ideal_resent)} |")
    return "\n".join(lines) + "\n"


def read_record(path):
    """A recorded sitting: one JSON object a line."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    generated_page.add_page_options(parser, ROOT)
    parser.add_argument("--record", default=RECORD)
    parser.add_argument("--tbf-record", default=TBF_RECORD)
    args = parser.parse_args()
    generated_page.require_etwire(parser, args.etwire)
    rows, tbf_rows = read_record(args.record), read_record(args.tbf_record)
    doc = args.check or args.write
    text = generated_page.read_page(TOOL, doc, SECTIONS) if doc else None
    work = tempfile.mkdtemp(prefix="etwire-dut-validation-")
    try:
        runs = ns3_ideal(args.etwire, work, rows)
        today = {"tbf_as_sent": tbf_table(args.etwire, work, tbf_rows),
                 "ns3_as_sent": ns3_table(runs), "ns3_ideal_sender": ns3_findings(runs)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return generated_page.settle(TOOL, doc, bool(args.check), text, today)


if __name__ == "__main__":
    sys.exit(main())
