"""The ns-3 router's tables of docs/dut-validation.md (scripts/dut-validation.py): a recorded
sitting of lab runs at three operating points beside the twin's ideal-sender prediction of each,
run today, and beside the lab's own frames replayed as sent (recorded with the runs)."""

import os
import statistics
import subprocess

from dut_tables_common import count, pct, run_on_the_twin, span
from ns3_cases import NS3_POINTS, ns3_config, qp_sums

POINT_NAMES = {("case", 1.0): "case", ("case", 0.002): "averaged", ("lossy", 1.0): "shallow"}
GATHER_BYTES = 4 * 1024 * 1024


def predict(etwire, work, trace, point, qw, dcqcn, seed, jitter=None):
    """The twin's prediction of one run: gather time (ms), goodput (Mb/s), and the receiver's CE
    marks and CNPs, the sender's rate cuts, retransmissions and timeouts, the frames the twin
    dropped. `jitter`: fabric.sender_jitter instead of the case's."""
    spec = NS3_POINTS[point]
    out = os.path.join(work, f"{point}-{qw}-{dcqcn}-{seed}-{jitter}")
    lab = ns3_config(work, trace, out, ["02:00:00:00:00:10", "02:00:00:00:00:11"], dcqcn=dcqcn,
                     bottleneck_bps=spec["bottleneck_bps"], sender_bps=60_000_000,
                     red={**spec["red"], "qw": qw})
    more = ["--set", f"fabric.sender_jitter={jitter}"] if jitter else []
    summary = run_on_the_twin(etwire, lab, out, "--set", f"run.seed={seed}", *more)
    cct_ns = summary["collectives"][0]["cct_ns"]
    rx = summary["ports"][0]
    return {"cct_ms": cct_ns / 1e6, "goodput_mbps": GATHER_BYTES * 8 / cct_ns * 1e3,
            "ce": rx["ecn_marked_received"], "cnps": rx["cnps_sent"],
            "cuts": qp_sums(out).get("rate_cuts", 0),
            "retransmitted": sum(p["retransmitted_packets"] for p in summary["ports"]),
            "timeouts": sum(p["timeouts"] for p in summary["ports"]),
            "lost": sum(p["drops"] for p in summary["ports"])}


def gather_trace(etwire, work):
    trace = os.path.join(work, "gather")
    subprocess.run([etwire, "synth", "microbench", "-c", "gather", "-b", "4MiB", "-n", "2", "-i",
                    "1", "-o", trace], check=True, capture_output=True)
    return trace


def ideal(etwire, work, trace, rows):
    """Each recorded run with the twin's ideal-sender prediction of it, run today: (row, seed,
    prediction)."""
    seen, out = {}, []
    for r in rows:
        key = (r["point"], r["qw"], r["run"] == "dcqcn_on")
        seen[key] = seen.get(key, 0) + 1
        seed = seen[key] if key[2] else 1
        out.append((r, seed, predict(etwire, work, trace, r["point"], r["qw"], key[2], seed)))
    return out


def run_label(r, seed):
    run = f"on {seed}" if r["run"] == "dcqcn_on" else "off"
    return f"{POINT_NAMES[r['point'], r['qw']]} | {run}"


def lab_table(runs):
    """The lab's counters of every run, the ideal sender's beside the ones it predicts."""
    lines = ["| point | run | goodput, lab | ideal sender | ns-3 marked | CE received | ideal | "
             "ns-3 dropped | CNPs | ideal | rate cuts | ideal | retransmitted | ideal |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r, seed, p in runs:
        lines.append(
            f"| {run_label(r, seed)} | {r['goodput_mbps']:.1f} Mb/s | "
            f"{pct(r['goodput_mbps'], p['goodput_mbps'])} | {count(r['ns3_marked'])} | "
            f"{count(r['ecn_marked_received'])} | {pct(r['ecn_marked_received'], p['ce'])} | "
            f"{count(r['ns3_dropped'])} | {count(r['cnps_sent'])} | "
            f"{pct(r['cnps_sent'], p['cnps'])} | {count(int(r['rate_cuts']))} | "
            f"{pct(r['rate_cuts'], p['cuts'])} | {count(r['retransmitted'])} | "
            f"{pct(r['retransmitted'], p['retransmitted'])} |")
    return "\n".join(lines) + "\n"


def lab_findings(runs):
    """What the page reads from the lab's counters: where DCQCN settles against the bottleneck,
    the CNPs against the marks, and the marks ns-3 made that etwire never received."""
    out = []
    for (point, qw), name in POINT_NAMES.items():
        on = [(r, p) for r, _, p in runs if (r["point"], r["qw"]) == (point, qw) and
              r["run"] == "dcqcn_on"]
        if not on:
            continue
        bottleneck = NS3_POINTS[point]["bottleneck_bps"] / 1e6
        goodput = span([r["goodput_mbps"] for r, _ in on], "{:.1f}")
        out.append(f"- **{name}**, DCQCN on: the lab's goodput {goodput} Mb/s "
                   f"of the {bottleneck:.0f} Mb/s bottleneck, the ideal sender's "
                   f"{span([p['goodput_mbps'] for _, p in on], '{:.1f}')}; CNPs "
                   f"{span([100 * r['cnps_sent'] / r['ecn_marked_received'] for r, _ in on])} % "
                   f"of the CE marks received.")
    dropped = [r for r, _, _ in runs if r["ns3_dropped"] > 0]
    clean = [r for r, _, _ in runs if r["ns3_dropped"] == 0]
    if dropped:
        gap = [r["ns3_marked"] - r["ecn_marked_received"] for r in dropped]
        out.append(f"- **Marked, then dropped**: in the {len(dropped)} runs where ns-3 dropped, it "
                   f"marked {span(gap, '{:,}')} frames more than etwire received CE-marked "
                   f"(it dropped {span([r['ns3_dropped'] for r in dropped], '{:,}')}).")
        full = sum(r["ns3_queue_full_drops"] == r["ns3_dropped"] for r in dropped)
        out.append(f"- **Why it dropped**: in {full} of those {len(dropped)} runs every drop was "
                   f"the full queue's, none RED's.")
    if clean:
        gap = [r["ns3_marked"] - r["ecn_marked_received"] for r in clean]
        out.append(f"- In the {len(clean)} runs without a drop, marks made less CE received: "
                   f"{span(gap)}.")
    on = [r["host_received"] - r["received"] for r, _, _ in runs if r["run"] == "dcqcn_on"]
    off = [r["host_received"] - r["received"] for r, _, _ in runs if r["run"] == "dcqcn_off"]
    out.append(f"- **Lost in etwire's socket ring** (received by the veth end, not by etwire's "
               f"port): {span(on)} frames a run with DCQCN on, {span(off)} with it off.")
    return "\n".join(out) + "\n"


def as_sent_table(runs):
    lines = ["| point | run | lab | ideal sender | as sent | calibrated | CE lab | ideal | as sent "
             "| calibrated | lost lab | as sent | calibrated |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r, seed, p in runs:
        lab_ms = r["cct_ms"]
        lab_last = r["as_sent_lab_last_ms"]
        lab_time = f"{lab_ms:.0f} ms" if lab_ms < 10_000 else f"{lab_ms / 1000:.1f} s"
        lost = r["as_sent_lab_lost"]
        lost_cells = [count(r[f"{k}_twin_lost"]) if lost < 1000 else pct(lost, r[f"{k}_twin_lost"])
                      for k in ("as_sent", "calibrated")]
        lines.append(
            f"| {run_label(r, seed)} | {lab_time} | "
            f"{pct(lab_ms, p['cct_ms'])} | {pct(lab_last, r['as_sent_twin_last_ms'])} | "
            f"{pct(lab_last, r['calibrated_twin_last_ms'])} | {count(r['as_sent_lab_ce'])} | "
            f"{pct(r['ecn_marked_received'], p['ce'])} | "
            f"{pct(r['as_sent_lab_ce'], r['as_sent_twin_ce'])} | "
            f"{pct(r['as_sent_lab_ce'], r['calibrated_twin_ce'])} | {count(lost)} | "
            f"{lost_cells[0]} | {lost_cells[1]} |")
    return "\n".join(lines) + "\n"


def ideal_findings(runs):
    """What the page reads from the ideal sender's column: its time off the lab's with DCQCN on
    and off, its retransmissions with DCQCN off, and where it is within 20 % with DCQCN off."""
    on = [100 * (p["cct_ms"] - r["cct_ms"]) / r["cct_ms"] for r, _, p in runs
          if r["run"] == "dcqcn_on"]
    off = [(POINT_NAMES[r["point"], r["qw"]], r, p) for r, _, p in runs if r["run"] == "dcqcn_off"]
    within = [f"{name} ({pct(r['cct_ms'], p['cct_ms'])})" for name, r, p in off
              if abs(p["cct_ms"] - r["cct_ms"]) <= 0.2 * r["cct_ms"]]
    beyond = [f"{name} ({pct(r['cct_ms'], p['cct_ms'])})" for name, r, p in off
              if abs(p["cct_ms"] - r["cct_ms"]) > 0.2 * r["cct_ms"]]
    off_times = ", ".join(f"{pct(r['cct_ms'], p['cct_ms'])} ({name})" for name, r, p in off)
    retransmitted = "; ".join(f"{name} {count(p['retransmitted'])} against "
                              f"{count(r['retransmitted'])} "
                              f"({pct(r['retransmitted'], p['retransmitted'])})"
                              for name, r, p in off)
    return (f"- **The ideal sender's time** is {min(abs(x) for x in on):.0f} to "
            f"{max(abs(x) for x in on):.0f} % off the lab's with DCQCN on, and "
            f"{off_times} with it off.\n"
            f"- **Its retransmissions with DCQCN off**, against the lab's: {retransmitted}.\n"
            f"- **DCQCN off within 20 %**, ideal sender: "
            f"{', '.join(within) if within else 'nowhere'}; beyond it: "
            f"{', '.join(beyond) if beyond else 'nowhere'}.\n")


# The sender jitters the twin's prediction is run with beside the case's own (ns3_cases.py), and
# the seeds each is run over.
JITTERS = ("0", "500us", "1ms", "2ms")
JITTER_SEEDS = (1, 2, 3, 4, 5)
# (column, the lab record's key, the prediction's key; None where one side has no such count)
JITTER_COLUMNS = (("gather time", "cct_ms", "cct_ms"), ("lost", "ns3_dropped", "lost"),
                  ("CE received", "ecn_marked_received", "ce"), ("CNPs", "cnps_sent", "cnps"),
                  ("retransmitted", "retransmitted", "retransmitted"),
                  ("timeouts", None, "timeouts"))


def mean_sd(values, against=None, fmt="{:,.0f}", unit=""):
    """"mean +- sample deviation" of the values (the value alone for one), with the mean against
    `against` in percent when given."""
    mean = statistics.mean(values)
    text = fmt.format(mean)
    if len(values) > 1:
        text += " +- " + fmt.format(statistics.stdev(values))
    return text + unit + (f" ({pct(against, mean)})" if against is not None else "")


def jitter_tables(etwire, work, trace, rows):
    """The case's point (RED on the instantaneous queue), DCQCN off and on: the sitting's lab
    runs beside the twin over five seeds at each sender jitter, mean +- sample deviation, the
    delta its mean against the lab's."""
    lab_runs = [r for r in rows if (r["point"], r["qw"]) == ("case", 1.0)]
    out = []
    for dcqcn, title in ((False, "DCQCN off"), (True, "DCQCN on")):
        lab = [r for r in lab_runs if (r["run"] == "dcqcn_on") == dcqcn]
        columns = [c for c in JITTER_COLUMNS if dcqcn or c[0] != "CNPs"]
        lines = [f"{title}:", "", "| | " + " | ".join(c[0] for c in columns) + " |",
                 "|---|" + "---|" * len(columns)]
        # Times in seconds with DCQCN off (tens of them), in ms with it on.
        scale, fmt, unit = (1000, "{:.1f}", " s") if not dcqcn else (1, "{:.0f}", " ms")

        def cells(runs, key, lab_mean=None, time=False):
            values = [x[key] / scale for x in runs] if time else [x[key] for x in runs]
            return mean_sd(values, lab_mean, fmt, unit) if time else mean_sd(values, lab_mean)

        lab_means = {c[0]: statistics.mean(r[c[1]] for r in lab) / (scale if i == 0 else 1)
                     for i, c in enumerate(columns) if c[1]}
        lines.append(f"| lab ({len(lab)} run{'s' if len(lab) > 1 else ''}) | " + " | ".join(
            cells(lab, c[1], time=i == 0) if c[1] else "" for i, c in enumerate(columns)) + " |")
        for jitter in JITTERS:
            twin = [predict(etwire, work, trace, "case", 1.0, dcqcn, seed, jitter)
                    for seed in JITTER_SEEDS]
            name = "no jitter" if jitter == "0" else f"jitter {jitter}"
            lines.append(f"| twin, {name} | " + " | ".join(
                cells(twin, c[2], lab_means.get(c[0]), time=i == 0)
                for i, c in enumerate(columns)) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def sections(etwire, work, rows):
    """Every generated section of the ns-3 router, by name."""
    trace = gather_trace(etwire, work)
    runs = ideal(etwire, work, trace, rows)
    return {"ns3_lab_runs": lab_table(runs), "ns3_lab_findings": lab_findings(runs),
            "ns3_as_sent": as_sent_table(runs), "ns3_ideal_sender": ideal_findings(runs),
            "ns3_jitter": jitter_tables(etwire, work, trace, rows)}
