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
    lines = ["| workload, collective | lab through OVS | prediction | back to back | "
             "b2b, OVS lcores | resent | OVS drops each way |", "|---|---|---|---|---|---|---|"]
    for label, kinds in predicted.items():
        runs = [r for r in rows if r.get("workload") == label]  # not its as-sent runs
        drops = [r[k] for r in runs for k in r if k.startswith("ovs_dropped_toward_")]
        resent = span([r["retransmitted"] for r in runs], "{:,}")
        for n, (kind, twin) in enumerate(kinds.items()):
            cells = [r["collectives"][kind] for r in runs]
            lines.append(
                f"| {label}: {kind} | {timing([c['lab'] for c in cells])} | "
                f"{twin['cct_ms']:.1f} ({twin['busbw_GBps']:.3f}) | "
                f"{timing([c['back_to_back'] for c in cells])} | "
                f"{timing([c['back_to_back_same_lcores'] for c in cells])} | "
                f"{resent if n == 0 else '(same runs)'} | "
                f"{span(drops, '{:,}') if n == 0 else ''} |")
    return "\n".join(lines) + "\n"


def runs_findings(rows, predicted):
    """The ratios the page reads: back to back against the twin, OVS's lcores against one, and
    OVS against the same lcores back to back; and the machine's load while it ran."""
    ratios = {"b2b": [], "lcores": [], "ovs": []}
    for r in (r for r in rows if "collectives" in r):
        for kind, c in r["collectives"].items():
            b2b, lcores = c["back_to_back"]["cct_ms"], c["back_to_back_same_lcores"]["cct_ms"]
            ratios["b2b"].append(b2b / predicted[r["workload"]][kind]["cct_ms"])
            ratios["lcores"].append(lcores / b2b)
            ratios["ovs"].append(c["lab"]["cct_ms"] / lcores)
    loads = [r["load_average"] for r in rows]
    sent = [r for r in rows if r.get("workload") == "allreduce-as-sent"]
    last = [100 * (r["as_sent_twin_last_ms"] - r["as_sent_lab_last_ms"]) /
            r["as_sent_lab_last_ms"] for r in sent]
    as_sent = (f"- **As sent** (the all-reduce once more with its ports captured, which slows "
               f"etwire's lcores: {span([r['as_sent_lab_last_ms'] for r in sent])} ms to port b's "
               f"last data frame): the twin fed the frames as they left delivers b's last data "
               f"frame {span(last, '{:+.1f}')} % off the lab's time, and loses "
               f"{span([r['as_sent_twin_lost'] for r in sent])} frames where the lab lost "
               f"{span([r['as_sent_lab_lost'] for r in sent])}: " +
               ("within the case's 10 %, so OVS adds to the time little the twin does not, and the "
                "factors above are etwire's CPUs, which the ideal sender's prediction cannot "
                "know.\n" if max(abs(x) for x in last) <= 10 else
                "beyond the case's 10 %: OVS's timing is not what the twin models.\n")) \
        if sent else ""
    return (f"- Back to back on one lcore takes {span(ratios['b2b'], '{:.2f}')} times the twin's "
            f"time.\n"
            f"- Spreading the same ports over the three lcores the OVS run needs costs "
            f"{span(ratios['lcores'], '{:.1f}')} times on this 2-core machine (load average "
            f"{span(loads, '{:.1f}')} while the cases ran).\n"
            f"- OVS, with its PMD sharing a CPU and every frame arriving on queue 1, adds another "
            f"{span(ratios['ovs'], '{:.1f}')} times.\n" + as_sent)


def sitting_ratios(rows, earlier):
    """How much longer an earlier sitting took than this one, through OVS and back to back: the
    ratios of their mean CCTs per collective."""
    def means(sitting, side):
        cells = {}
        for r in (r for r in sitting if "collectives" in r):
            for kind, c in r["collectives"].items():
                cells.setdefault((r["workload"], kind), []).append(c[side]["cct_ms"])
        return {key: sum(v) / len(v) for key, v in cells.items()}
    ratios = {}
    for side in ("lab", "back_to_back"):
        now, then = means(rows, side), means(earlier, side)
        ratios[side] = [then[key] / now[key] for key in now if key in then]
    return (f"- **An earlier sitting** (09:38 the same day, the first DUT runs on a machine "
            f"just set up; docs/data/ovs-dpdk-2026-12-02-first.jsonl, load average "
            f"{span([r['load_average'] for r in earlier], '{:.1f}')}): through OVS "
            f"{span(ratios['lab'], '{:.1f}')} times this sitting's mean times, back to back "
            f"{span(ratios['back_to_back'], '{:.2f}')} times: OVS's side of this machine varies "
            f"between sittings, etwire's alone does not.\n")


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


def sections(etwire, work, source_dir, rows, earlier):
    """Every generated section of Open vSwitch, by name: `rows` the sitting tabled, `earlier`
    another sitting it is compared with."""
    predicted = predict(etwire, work, source_dir)
    return {"ovs_runs": runs_table(rows, predicted),
            "ovs_findings": runs_findings(rows, predicted) + sitting_ratios(rows, earlier),
            "ovs_ecn": ecn_table(rows)}
