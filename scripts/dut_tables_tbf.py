"""The tbf bridge's tables of docs/dut-validation.md (scripts/dut-validation.py): recorded sittings
of lab runs, one quiet and one beside load, against the twin's prediction of the case run today,
and the quiet sitting's runs replayed as sent (recorded with the runs)."""

import os
from types import SimpleNamespace

from dut_tables_common import count, pct, run_on_the_twin, span
from tbf_cases import TBF_RATE_BPS, shaper_bound_ns, tbf_config, tbf_trace


def predict(etwire, work):
    """The twin's prediction of the case: (gather ms, frames retransmitted)."""
    trace = tbf_trace(SimpleNamespace(etwire=etwire), work)
    out = os.path.join(work, "tbf-out")
    macs = [f"02:00:00:00:00:1{i}" for i in range(4)]
    ideal = run_on_the_twin(etwire, tbf_config(work, trace, out, macs), out)
    return (ideal["collectives"][0]["cct_ns"] / 1e6,
            sum(p["retransmitted_packets"] for p in ideal["ports"]))


def as_sent_table(rows, ideal_ms, ideal_resent):
    """The quiet sitting: the lab's gather and drops beside the ideal sender's prediction and the
    two predictions as sent, through a link at the shaper's rate (the case's twin) and through the
    shaper modelled as tbf is (rate, burst and limit)."""
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
    link = [100 * (r["as_sent_twin_lost"] - r["as_sent_lab_lost"]) / r["as_sent_lab_lost"]
            for r in rows]
    model = [100 * (r["tbf_model_twin_lost"] - r["tbf_model_lab_lost"]) / r["tbf_model_lab_lost"]
             for r in rows]
    last = [abs(r[f"{k}_twin_last_ms"] - r["as_sent_lab_last_ms"]) / r["as_sent_lab_last_ms"]
            for r in rows for k in ("as_sent", "tbf_model")]
    shorter = [100 * (r["cct_ms"] - ideal_ms) / r["cct_ms"] for r in rows]
    return "\n".join(lines) + (
        f"\n\nThe link at the shaper's rate drops {span(link, '{:+.1f}')} % against what the "
        f"shaper dropped; the shaper modelled as tbf, {span(model, '{:+.1f}')} %. The last data "
        f"frame arrives within {100 * max(last):.1f} % of the lab's either way. So the device is "
        f"modelled, and what the ideal sender's prediction misses (a gather "
        f"{span(shorter)} % shorter than the lab's, {count(ideal_resent)} retransmissions "
        f"against {span([r['etwire_retransmitted'] for r in rows], '{:,}')}) is in what the "
        f"senders sent: their timing under load (below).\n")


def waiting(r):
    """The share of etwire's runnable time it spent waiting for a CPU, in percent."""
    runnable = r["etwire_cpu_s"] + r["etwire_cpu_wait_s"]
    return 100 * r["etwire_cpu_wait_s"] / runnable if runnable else 0


def load_table(sittings, ideal_ms, ideal_resent):
    """Each sitting (its load, its runs) in a line: how many runs failed a flow, how long etwire
    waited for a CPU, and of the runs that completed the gather against the prediction and the
    bound the case asserted, and what the shaper and the senders did, beside the
    prediction's."""
    lines = ["| load | runs | etwire waited | gather / prediction | bound | share of the "
             "bottleneck | timeouts | retransmitted | shaper dropped |",
             "|---|---|---|---|---|---|---|---|---|"]
    for load, every in sittings:
        rows = [r for r in every if r.get("status", "completed") == "completed"]
        failed = len(every) - len(rows)
        runs = f"{len(every)}, {failed} failed" if failed else f"{len(every)}"
        lines.append(
            f"| {load} | {runs} | {span([waiting(r) for r in every])} % | "
            f"{span([r['cct_ms'] / ideal_ms for r in rows], '{:.2f}')} | "
            f"{span([1 + r['cct_tolerance_percent'] / 100 for r in rows], '{:.2f}')} | "
            f"{span([100 * r['bottleneck_share'] for r in rows])} % | "
            f"{span([r['etwire_timeouts'] for r in rows])} | "
            f"{span([r['etwire_retransmitted'] for r in rows], '{:,}')} | "
            f"{span([r['shaper_dropped'] for r in rows], '{:,}')} |")
    share = 100 * shaper_bound_ns(TBF_RATE_BPS) / 1e6 / ideal_ms
    lines.append(f"| prediction (every run) | | | {ideal_ms:.0f} ms | | {share:.0f} % | 0 | "
                 f"{count(ideal_resent)} | |")
    return "\n".join(lines) + "\n"


def sections(etwire, work, quiet, sittings):
    """Every generated section of the tbf bridge, by name: `quiet` is the sitting replayed as
    sent, `sittings` (load, rows) every sitting."""
    ideal_ms, ideal_resent = predict(etwire, work)
    return {"tbf_as_sent": as_sent_table(quiet, ideal_ms, ideal_resent),
            "tbf_load": load_table(sittings, ideal_ms, ideal_resent)}
