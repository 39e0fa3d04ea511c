"""Open vSwitch's tables of docs/dut-validation.md (scripts/dut-validation.py): a recorded sitting
of ovs_allreduce and ovs_ecn_mark runs, beside the twin's prediction of each workload run today."""

from dut_tables_common import run_on_the_twin, span
from ovs_cases import allreduce_workloads, back_to_back_config, per_type


def predict(etwire, work, source_dir):
    """The twin's prediction of each workload, per collective type: {label: {type: figures}}."""
    out = {}
    for label, jobs, iterations, dcqcn in allreduce_workloads(source_dir):
        config, results = back_to_back_config(work, label, jobs, iterations=iterations,
                                              dcqcn=dcqcn)
        out[label] = per_type(run_on_the_twin(etwire, config, results))
    return out


def timing(cells):
    """CCT (ms) over the runs, with the busbw (GB/s) beside it."""
    return (f"{span([c['cct_ms'] for c in cells], '{:.1f}')} "
            f"({span([c['busbw_GBps'] for c in cells], '{:.3f}')})")


def runs_table(rows, predicted):
    """Each workload's collectives: the lab through OVS, the prediction, and the same ports back
    to back on one lcore and on OVS's lcores; what was resent and what OVS dropped."""
    lines = ["| workload, collective | lab through OVS | prediction | back to back | b2b, OVS lcores "
             "| resent | OVS drops each way |", "|---|---|---|---|---|---|---|"]
    for label, kinds in predicted.items():
        runs = [r for r in rows if r.get("workload") == label]
        drops = [r[k] for r in runs for k in r if k.startswith("ovs_dropped_toward_")]
        for n, (kind, twin) in enumerate(kinds.items()):
            cells = [r["collectives"][kind] for r in runs]
            lines.append(
                f"| {label}: {kind} | {timing([c['lab'] for c in cells])} | "
                f"{twin['cct_ms']:.1f} ({twin['busbw_GBps']:.3f}) | "
                f"{timing([c['back_to_back'] for c in cells])} | "
                f"{timing([c['back_to_back_same_lcores'] for c in cells])} | "
                f"{span([r['retransmitted'] for r in runs], '{:,}') if n == 0 else '(same runs)'} | "
                f"{span(drops, '{:,}') if n == 0 else ''} |")
    return "\n".join(lines) + "\n"


def runs_findings(rows, predicted):
    """The ratios the page reads: back to back against the twin, OVS's lcores against one, and
    OVS against the same lcores back to back; and the machine's load while it ran."""
    ratios = {"b2b": [], "lcores": [], "ovs": []}
    for r in (r for r in rows if "workload" in r):
        for kind, c in r["collectives"].items():
            ratios["b2b"].append(c["back_to_back"]["cct_ms"] / predicted[r["workload"]][kind]["cct_ms"])
            ratios["lcores"].append(c["back_to_back_same_lcores"]["cct_ms"] / c["back_to_back"]["cct_ms"])
            ratios["ovs"].append(c["lab"]["cct_ms"] / c["back_to_back_same_lcores"]["cct_ms"])
    loads = [r["load_average"] for r in rows]
    return (f"- Back to back on one lcore takes {span(ratios['b2b'], '{:.2f}')} times the twin's "
            f"time.\n"
            f"- Spreading the same ports over the three lcores the OVS run needs costs "
            f"{span(ratios['lcores'], '{:.1f}')} times on this 2-core machine (load average "
            f"{span(loads, '{:.1f}')} while the cases ran).\n"
            f"- OVS, with its PMD sharing a CPU and every frame arriving on queue 1, adds another "
            f"{span(ratios['ovs'], '{:.1f}')} times.\n")


def ecn_table(rows):
    """ovs_ecn_mark's runs, by CNP spacing: marks made and received, CNPs, and who cut."""
    lines = ["| `min_time_between_cnps` | runs | OVS marked | CE received | CNPs sent | CNPs "
             "received | QPs marked | requesters that cut | rate cuts |",
             "|---|---|---|---|---|---|---|---|---|"]
    spacings = []
    for r in rows:
        if r.get("case") == "ecn_mark" and r["min_time_between_cnps"] not in spacings:
            spacings.append(r["min_time_between_cnps"])
    for spacing in spacings:
        runs = [r for r in rows if r.get("case") == "ecn_mark" and
                r["min_time_between_cnps"] == spacing]
        cells = [span([r[k] for r in runs], "{:,}") for k in (
            "marked_by_ovs", "ecn_marked_received", "cnps_sent", "cnps_received", "qps_marked",
            "requesters_cut", "rate_cuts")]
        lines.append(f"| {spacing} | {len(runs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sections(etwire, work, source_dir, rows):
    """Every generated section of Open vSwitch, by name."""
    predicted = predict(etwire, work, source_dir)
    return {"ovs_runs": runs_table(rows, predicted), "ovs_findings": runs_findings(rows, predicted),
            "ovs_ecn": ecn_table(rows)}
