"""The tables, findings and plots of docs/case-study-load-balancing.md, from the runs' files."""

import re
import statistics
import sys
import textwrap

import lb_case_runs as lb
import svg_charts

NAMES = ["bound", "a2a", "costs", "reorder", "references", "seeds", "mix", "findings"]
MODE_LABEL = {m: label for m, label, _ in lb.MODES}
RECEIVER_LABEL = {r: label for r, label, _ in lb.RECEIVERS}
KINDS = ["to host", "leaf up", "spine down"]


class Made:
    def __init__(self, sections, images):
        self.sections, self.images = sections, images


def claim(holds, finding):
    """A finding the page states in words: the runs must still show it."""
    if not holds:
        sys.exit(f"case-study-load-balancing: the runs no longer show that {finding}; the "
                 "page's words need rewriting, not only its numbers")


def number(value):
    return f"{value:,}"


def us(ns):
    return f"{ns / 1e3:.1f}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(["\n".join(lines)] + ["| " + " | ".join(row) + " |" for row in rows])


def main_runs(runs, prefix):
    """(mode, receiver, run) of the five modes under both receivers, in the page's order."""
    return [(m, r, runs[f"{prefix}/{m}-{r}"]) for m, _, _ in lb.MODES for r, _, _ in lb.RECEIVERS]


def deepest(run):
    return " / ".join(f"{run.deepest[k] / 1e3:,.0f}" for k in KINDS)


def bound_table(bound, single):
    gbps = bound.speed / 1e9
    rows = [
        ["a message (one flow)", f"{number(bound.message)} B of payload = {bound.packets} "
         f"packets of at most {number(bound.pmtu)} B; {number(bound.message_wire)} B on the wire "
         f"(headers, RETH on the first, immediate data on the last)"],
        ["a host's part of one all-to-all", f"{bound.messages} messages, "
         f"{number(bound.messages * bound.message_wire)} B on the wire: {us(bound.host_ns)} us "
         f"at {gbps:.0f} Gb/s"],
        ["the longest path, for the last packet", f"{bound.switches + 1} links and "
         f"{bound.switches} switches (propagation, switch latency and the last frame stored and "
         f"sent on at each): {bound.path_ns / 1e3:.2f} us"],
        ["**no-collision bound**", f"**{us(bound.ns)} us**; 10 % above it: {us(1.1 * bound.ns)} us"],
        ["the same on one 64-port switch", f"{single.switches + 1} links, {single.switches} "
         f"switch: {single.path_ns / 1e3:.2f} us; bound {us(single.ns)} us"],
    ]
    return table(["", ""], rows)


def a2a_table(runs, bound):
    rows = []
    for m, r, run in main_runs(runs, "a2a"):
        fct = run.fct["all_to_all"]
        rows.append([MODE_LABEL[m], RECEIVER_LABEL[r], us(fct["p50_ns"]), us(fct["p99_ns"]),
                     f"{fct['p99_ns'] / bound.ns:.3f}", us(fct["max_ns"]),
                     f"{run.end_ms('all_to_all'):.2f}",
                     number(run.total("retransmitted_packets")), number(run.naks),
                     number(run.total("timeouts"))])
    return table(["load balancing", "receiver", "FCT, us: p50", "p99", "p99 / bound", "max",
                  "end, ms", "packets sent again", "NAKs", "timeouts"], rows)


def costs_table(runs, prefix):
    rows = []
    for m, r, run in main_runs(runs, prefix):
        spread = f"{run.uplink_spread:.2f}" if run.uplink_spread else "-"
        rows.append([MODE_LABEL[m], RECEIVER_LABEL[r], deepest(run), spread,
                     number(run.total("ecn_marked_received")), number(run.total("cnps_received")),
                     number(run.total("pfc_pauses_received")), number(run.total("drops"))])
    return table(["load balancing", "receiver", "deepest queue, KB: to hosts / leaf uplinks / "
                  "spine downlinks", "busiest leaf uplink / mean", "ECN marks", "CNPs",
                  "PFC pauses received", "drops"], rows)


def reorder_table(runs):
    rows = []
    for m in lb.PROBED:
        cells = [MODE_LABEL[m]]
        for k in lb.LOSS_AFTER:
            run = runs[f"a2a/{m}-ooo" if k == 64 else f"a2a/{m}-ooo-loss-{k}"]
            cells.append(f"{number(run.total('missing_packets'))} "
                         f"({us(run.fct['all_to_all']['p99_ns'])} us)")
        rows.append(cells)
    return table(["load balancing (out-of-order)"]
                 + [f"loss_after {k}: PSNs reported missing (p99)" for k in lb.LOSS_AFTER], rows)


def references_table(runs, bound, single):
    rows = []
    for name, label, _ in lb.REFERENCES:
        run, own = runs["a2a/" + name], single if name.startswith("single") else bound
        fct = run.fct["all_to_all"]
        rows.append([label, us(own.ns), us(fct["p50_ns"]), us(fct["p99_ns"]),
                     f"{fct['p99_ns'] / own.ns:.3f}", us(fct["max_ns"]),
                     number(run.total("retransmitted_packets")), number(run.total("timeouts")),
                     number(run.total("ecn_marked_received")), deepest(run)])
    return table(["run", "its bound, us", "FCT, us: p50", "p99", "p99 / bound", "max",
                  "packets sent again", "timeouts", "ECN marks",
                  "deepest queue, KB: to hosts / leaf uplinks / spine downlinks"], rows)


def seeds_table(runs, bound):
    rows = []
    for m, r in lb.SEEDED:
        for seed in [5] + lb.SEEDS:
            run = runs[f"a2a/{m}-{r}" + ("" if seed == 5 else f"-seed-{seed}")]
            fct = run.fct["all_to_all"]
            rows.append([f"{MODE_LABEL[m]}, {RECEIVER_LABEL[r]}", str(seed), us(fct["p99_ns"]),
                         f"{fct['p99_ns'] / bound.ns:.3f}", us(fct["max_ns"]),
                         number(run.total("retransmitted_packets")), number(run.naks),
                         number(run.total("timeouts"))])
    return table(["load balancing, receiver", "seed", "FCT p99, us", "p99 / bound", "max, us",
                  "packets sent again", "NAKs", "timeouts"], rows)


def mix_table(runs):
    rows = []
    for m, r, run in main_runs(runs, "mix"):
        busbw, fct = run.busbw(), run.fct["all_to_all"]
        mean = statistics.mean(busbw)
        rows.append([MODE_LABEL[m], RECEIVER_LABEL[r], f"{mean:.2f}",
                     f"{100 * statistics.pstdev(busbw) / mean:.1f} %", us(fct["p99_ns"]),
                     us(fct["max_ns"]), number(run.total("retransmitted_packets")),
                     number(run.naks), number(run.total("timeouts")),
                     number(run.total("missing_packets")), deepest(run),
                     f"{run.end_ms('all_reduce'):.2f} / {run.end_ms('all_to_all'):.2f}"])
    return table(["load balancing", "receiver", "all-reduce busbw, GB/s: mean", "CV",
                  "all-to-all FCT, us: p99", "max", "packets sent again", "NAKs", "timeouts",
                  "PSNs reported missing", "deepest queue, KB: to hosts / leaf uplinks / spine "
                  "downlinks", "end of all-reduce / all-to-all, ms"], rows)


def plots(runs, bound):
    modes = [label for _, label, _ in lb.MODES]
    receivers = [label for _, label, _ in lb.RECEIVERS]
    p99 = [[runs[f"a2a/{m}-{r}"].fct["all_to_all"]["p99_ns"] / 1e3 for r, _, _ in lb.RECEIVERS]
           for m, _, _ in lb.MODES]
    bars = svg_charts.grouped_bars(
        "64-rank all-to-all: p99 FCT by load balancing and receiver", "p99 FCT, us", modes,
        receivers, p99, [50, 100, 200, 500, 1000, 2000],
        references=[(bound.ns / 1e3, "no-collision bound"), (1.1 * bound.ns / 1e3, "+10 %")])
    curves = [(f"{label}, {'GBN' if r == 'gbn' else 'OOO'}",
               [f / 1e3 for f in runs[f"a2a/{m}-{r}"].fcts()], i, r == "gbn")
              for i, (m, label, _) in enumerate(lb.MODES) for r, _, _ in lb.RECEIVERS]
    ccdf = svg_charts.ccdf(
        "64-rank all-to-all: FCT tail (solid: out-of-order, dashed: go-back-N)", "FCT, us",
        curves, [70, 100, 200, 500, 1000, 5000, 40000], 5e-5, marks=[(bound.ns / 1e3, "bound")])
    busbw = [[statistics.mean(runs[f"mix/{m}-{r}"].busbw()) for r, _, _ in lb.RECEIVERS]
             for m, _, _ in lb.MODES]
    mix = svg_charts.grouped_bars(
        "All-reduce + MoE all-to-all mix: all-reduce busbw", "busbw, GB/s (mean)", modes,
        receivers, busbw, [0, 10, 20, 30, 40, 50],
        references=[(statistics.mean(runs["mix/ecmp-gbn"].busbw()), "ECMP")], log=False)
    return {"images/lb-a2a-p99.svg": bars, "images/lb-a2a-fct-tail.svg": ccdf,
            "images/lb-mix-busbw.svg": mix}


def wrap(paragraphs):
    """Wrapped as the page's own text is; a list item's lines hang under its first word, and a
    number keeps its unit on its line."""
    return "\n".join(
        "" if not p else textwrap.fill(re.sub(r"(\d) (%|us|ms|KB|GB/s)", "\\1\u00a0\\2", p), 100,
                                       subsequent_indent="   " if p[0].isdigit() else "",
                                       break_on_hyphens=False)
        .replace("\u00a0", " ") for p in paragraphs)


def make(runs, config, findings):
    """The page's sections and images; findings(runs, config, bound, single) gives items 1-6 as
    paragraphs (lb_case_findings, which uses this module's helpers)."""
    first = runs["a2a/ecmp-gbn"].collectives[0]
    size, group = int(first["trace_bytes"]), int(first["group_size"])
    bound = lb.Bound(config, size, group, "leaf-spine")
    single = lb.Bound(config, size, group, "single-switch")
    sections = {
        "bound": bound_table(bound, single),
        "a2a": a2a_table(runs, bound),
        "costs": costs_table(runs, "a2a"),
        "reorder": reorder_table(runs),
        "references": references_table(runs, bound, single),
        "seeds": seeds_table(runs, bound),
        "mix": mix_table(runs) + "\n\nWhere its queues were:\n\n" + costs_table(runs, "mix"),
        "findings": wrap(findings(runs, config, bound, single)),
    }
    return Made(sections, plots(runs, bound))
