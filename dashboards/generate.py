#!/usr/bin/env python3
"""Writes the etwire Grafana dashboards (dashboards/etwire-*.json).

    python3 dashboards/generate.py          regenerate the JSON files in place
    python3 dashboards/generate.py --check  exit 1 and name each stale file, exit 0 if all match

Standard library only; the output is deterministic (2-space indent, trailing newline).

Rates: every "per second" panel divides the increase of a counter by the advance of
etwire_run_virtual_time_seconds over the same window (see per_second), so rates are per second of
the data plane's clock. Where that clock follows the wall clock the result equals rate(); on
loopback ports replayed with --time-scale it stays comparable with the port speed and the paced
rate, which are per data-plane second too. Quantiles, which do not depend on the time base, use
rate() directly.

Bits: throughput and rate panels of ports show bits per second (Grafana unit "bps", read as
Gb/s), as network people read link speeds; the metrics count bytes, so those queries multiply by
8 (see bits_per_second). Bus and algorithm bandwidth stay in bytes per second (GB/s), as
nccl-tests prints them.

Over the run: tables and tiles that show where a run ended are instant queries of the last value
over the dashboard's range (last_over_time(...[$__range]), see last_in_range), not of the current
sample: once a run ends and its endpoint goes away, Prometheus marks its series stale and a plain
instant query finds nothing, while the last value in the range is the run's final one.

Hosts: every query also matches host=~"$host". A run split between emulator processes on several
hosts has series from each; the host selector narrows the panels to some of them, and the sums
add up the selected hosts' series as they add up ports or jobs.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RUN = 'run=~"$run"'
HOST = 'host=~"$host"'
JOB = 'job_name=~"$job"'
PORT = 'port=~"$port"'
WINDOW = "[$__rate_interval]"
RANGE = "[$__range]"
VTIME = "etwire_run_virtual_time_seconds"

OTHER_DASHBOARDS_LINK = {
    "asDropdown": False,
    "icon": "external link",
    "includeVars": True,
    "keepTime": True,
    "tags": ["etwire"],
    "targetBlank": False,
    "title": "etwire dashboards",
    "tooltip": "",
    "type": "dashboards",
    "url": "",
}

RUN_STATE_COLORS = [
    ("running", "blue"),
    ("completed", "green"),
    ("flows-failed", "red"),
    ("stuck", "red"),
    ("interrupted", "orange"),
    ("failed", "red"),
]


# --- PromQL helpers ---------------------------------------------------------------------------

def sel(metric, *matchers):
    """metric{m1,m2,...}"""
    return "%s{%s}" % (metric, ",".join(matchers))


def per_second(counter, by, *matchers):
    """Increase of a counter per second of the data plane's clock, summed by the given labels.

    `by` must include run, the label the division matches on. The virtual time goes through
    increase() like a counter, so a second run under the same name (the clock starts again at 0)
    does not produce a spike; the floor of 1 ns gives 0 instead of 0/0 once the clock stops. The
    clock is the furthest of the selected hosts'.
    """
    return (
        "sum by (%s) (increase(%s%s)) / on(run) group_left() "
        "clamp_min(max by (run) (increase(%s%s)), 1e-9)"
        % (by, sel(counter, *matchers), WINDOW, sel(VTIME, RUN, HOST), WINDOW)
    )


def bits_per_second(bytes_per_second_expr):
    """A bytes-per-second query in bits per second."""
    return "8 * (%s)" % bytes_per_second_expr


def last_in_range(selector):
    """The last sample of each series over the dashboard's range: a run's final value, still
    there after the run ended and its series went stale."""
    return "last_over_time(%s%s)" % (selector, RANGE)


def quantile_over_window(q, histogram, by, *matchers):
    return "histogram_quantile(%s, sum by (%s, le) (rate(%s%s)))" % (
        q, by, sel(histogram + "_bucket", *matchers), WINDOW)


def quantile_over_run(q, histogram, by, *matchers):
    return "histogram_quantile(%s, sum by (%s, le) (%s))" % (
        q, by, last_in_range(sel(histogram + "_bucket", *matchers)))


def mean_over_run(histogram, by, *matchers):
    return "sum by (%s) (%s) / sum by (%s) (%s)" % (
        by, last_in_range(sel(histogram + "_sum", *matchers)), by,
        last_in_range(sel(histogram + "_count", *matchers)))


def total_over_run(counter, by, *matchers):
    return "sum by (%s) (%s)" % (by, last_in_range(sel(counter, *matchers)))


QUANTILES = [("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99"), ("0.999", "p99.9")]


# --- Grafana object helpers -------------------------------------------------------------------

def target(expr, legend="__auto", fmt=None, instant=False):
    t = {
        "datasource": DATASOURCE,
        "editorMode": "code",
        "expr": expr,
        "instant": instant,
        "legendFormat": legend,
        "range": not instant,
    }
    if fmt:
        t["format"] = fmt
    return t


def thresholds(*steps):
    """steps: (value or None, color); None is the base step."""
    return {"mode": "absolute", "steps": [{"color": c, "value": v} for v, c in steps]}


REDUCE_LAST = {"calcs": ["lastNotNull"], "fields": "", "values": False}


def timeseries(title, description, targets, unit, axis_label=None, minimum=0, maximum=None,
               overrides=None):
    custom = {
        "drawStyle": "line",
        "fillOpacity": 0,
        "lineInterpolation": "stepAfter",
        "lineWidth": 1,
        "showPoints": "never",
        "spanNulls": False,
    }
    if axis_label:
        custom["axisLabel"] = axis_label
    defaults = {"custom": custom, "unit": unit}
    if minimum is not None:
        defaults["min"] = minimum
    if maximum is not None:
        defaults["max"] = maximum
    return {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
        "options": {
            "legend": {"calcs": [], "displayMode": "list", "placement": "bottom",
                       "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": targets,
    }


def stat(title, description, targets, unit="none", text_mode="auto", color_mode="value",
         steps=None, no_value=None, overrides=None):
    defaults = {
        "color": {"mode": "thresholds"},
        "thresholds": thresholds(*(steps or [(None, "text")])),
        "unit": unit,
    }
    if no_value is not None:
        defaults["noValue"] = no_value
    return {
        "type": "stat",
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
        "options": {
            "colorMode": color_mode,
            "graphMode": "none",
            "justifyMode": "auto",
            "orientation": "auto",
            "reduceOptions": REDUCE_LAST,
            "textMode": text_mode,
        },
        "targets": targets,
    }


def fraction_bargauge(title, description, targets):
    return {
        "type": "bargauge",
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "fieldConfig": {
            "defaults": {
                "color": {"mode": "thresholds"},
                "max": 1,
                "min": 0,
                "thresholds": thresholds((None, "blue"), (1, "green")),
                "unit": "percentunit",
            },
            "overrides": [],
        },
        "options": {
            "displayMode": "gradient",
            "minVizHeight": 10,
            "minVizWidth": 0,
            "orientation": "horizontal",
            "reduceOptions": REDUCE_LAST,
            "showUnfilled": True,
            "valueMode": "color",
        },
        "targets": targets,
    }


def table(title, description, targets, transformations, unit="none", overrides=None):
    return {
        "type": "table",
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": overrides or []},
        "options": {"cellHeight": "sm", "showHeader": True},
        "targets": targets,
        "transformations": transformations,
    }


def merged_table(title, description, columns, unit):
    """One instant query per column, merged on their labels (run, collective) into one table.

    columns: (header, expr, unit or None); a column with a unit of its own shows no decimals.
    """
    targets, rename, order, overrides = [], {}, {"run": 0, "collective": 1}, []
    for i, (header, expr, column_unit) in enumerate(columns):
        ref = chr(ord("A") + i)
        targets.append(dict(target(expr, fmt="table", instant=True), refId=ref))
        rename["Value #%s" % ref] = header
        order[header] = 2 + i
        if column_unit:
            overrides.append({
                "matcher": {"id": "byName", "options": header},
                "properties": [{"id": "unit", "value": column_unit},
                               {"id": "decimals", "value": 0}],
            })
    return table(title, description, targets, [
        {"id": "merge", "options": {}},
        {"id": "organize", "options": {"excludeByName": {"Time": True},
                                       "indexByName": order, "renameByName": rename}},
    ], unit=unit, overrides=overrides)


def heatmap(title, description, expr):
    return {
        "type": "heatmap",
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": {}, "overrides": []},
        "options": {
            "calculate": False,
            "cellGap": 1,
            "cellValues": {"unit": "short"},
            "color": {"exponent": 0.5, "fill": "dark-orange", "mode": "scheme", "reverse": False,
                      "scale": "exponential", "scheme": "Oranges", "steps": 64},
            "filterValues": {"le": 1e-9},
            "legend": {"show": True},
            "rowsFrame": {"layout": "auto", "value": "flows"},
            "tooltip": {"show": True, "yHistogram": False},
            "yAxis": {"axisPlacement": "left", "reverse": False, "unit": "s"},
        },
        "targets": [target(expr, legend="{{le}}", fmt="heatmap")],
    }


def datasource_variable():
    return {
        "current": {"selected": False, "text": "etwire Prometheus", "value": "etwire-prometheus"},
        "hide": 0,
        "includeAll": False,
        "label": "Data source",
        "multi": False,
        "name": "datasource",
        "options": [],
        "query": "prometheus",
        "refresh": 1,
        "regex": "",
        "skipUrlSync": False,
        "type": "datasource",
    }


def query_variable(name, label, query):
    return {
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "datasource": DATASOURCE,
        "definition": query,
        "hide": 0,
        "includeAll": True,
        "label": label,
        "multi": True,
        "name": name,
        "options": [],
        "query": query,
        "refresh": 2,
        "regex": "",
        "skipUrlSync": False,
        "sort": 1,
        "type": "query",
    }


VARIABLES = {
    "datasource": datasource_variable,
    "run": lambda: query_variable("run", "Run", "label_values(etwire_run_info, run)"),
    "host": lambda: query_variable("host", "Host",
                                   'label_values(etwire_run_info{run=~"$run"}, host)'),
    "job": lambda: query_variable(
        "job", "Job", 'label_values(etwire_job_nodes{run=~"$run",host=~"$host"}, job_name)'),
    "port": lambda: query_variable(
        "port", "Port",
        'label_values(etwire_port_speed_bytes_per_second{run=~"$run",host=~"$host"}, port)'),
}


def layout(panels):
    """panels: (width, height, panel); fills rows of 24 columns left to right, numbers the
    panels and their targets."""
    x = y = row_height = 0
    out = []
    for number, (w, h, panel) in enumerate(panels, start=1):
        if x + w > 24:
            x, y, row_height = 0, y + row_height, 0
        panel = dict(panel, id=number, gridPos={"h": h, "w": w, "x": x, "y": y})
        for i, t in enumerate(panel["targets"]):
            t.setdefault("refId", chr(ord("A") + i))
        out.append(panel)
        x += w
        row_height = max(row_height, h)
    return out


def dashboard(uid, title, description, variables, panels):
    return {
        "annotations": {"list": []},
        "description": description,
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": None,
        "links": [OTHER_DASHBOARDS_LINK],
        "liveNow": False,
        "panels": layout(panels),
        "refresh": "5s",
        "schemaVersion": 38,
        "tags": ["etwire"],
        "templating": {"list": [VARIABLES[v]() for v in variables]},
        "time": {"from": "now-15m", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": title,
        "uid": uid,
        "version": 1,
        "weekStart": "",
    }


# --- Dashboards -------------------------------------------------------------------------------

def overview():
    rh = (RUN, HOST)
    rj = (RUN, HOST, JOB)
    state_colors = [{
        "matcher": {"id": "byRegexp", "options": ".*: %s$" % state},
        "properties": [{"id": "color", "value": {"fixedColor": color, "mode": "fixed"}}],
    } for state, color in RUN_STATE_COLORS]
    panels = [
        (6, 4, stat(
            "Run state",
            "Current state of each selected run, one tile per run: running, completed, "
            "flows-failed, stuck, interrupted or failed. A run that ended keeps its final state "
            "for the dashboard's time range.",
            [target('max by (run, state) (%s) == 1' % last_in_range(sel("etwire_run_state", *rh)),
                    legend="{{run}}: {{state}}", instant=True)],
            text_mode="name", color_mode="background", overrides=state_colors)),
        (12, 4, table(
            "Run",
            "Topology and configuration digest of each selected run, one row per host "
            "(etwire_run_info), also after the run ended.",
            [target(last_in_range(sel("etwire_run_info", *rh)), fmt="table", instant=True)],
            [{"id": "organize", "options": {
                "excludeByName": {"Time": True, "Value": True, "__name__": True,
                                  "instance": True, "job": True},
                "indexByName": {"run": 0, "host": 1, "topology": 2, "config_digest": 3},
                "renameByName": {}}}])),
        (6, 4, stat(
            "Virtual time",
            "The data plane's clock (etwire_run_virtual_time_seconds).",
            [target("max by (run) (%s)" % sel(VTIME, *rh), legend="{{run}}")], unit="s")),
        (6, 6, fraction_bargauge(
            "Iterations completed",
            "Iterations completed (warm-up included) / iterations planned, per job.",
            [target("sum by (run, job_name) (%s) / max by (run, job_name) (%s)" % (
                sel("etwire_job_iterations_completed_total", *rj),
                sel("etwire_job_iterations", *rj)), legend="{{job_name}}")])),
        (6, 6, stat(
            "Iterations",
            "Iterations completed (warm-up included) and planned (warm-up + measured), per job.",
            [target("sum by (run, job_name) (%s)" % sel("etwire_job_iterations_completed_total", *rj),
                    legend="{{job_name}} completed"),
             target("max by (run, job_name) (%s)" % sel("etwire_job_iterations", *rj),
                    legend="{{job_name}} planned")])),
        (6, 6, fraction_bargauge(
            "Trace nodes completed",
            "Trace nodes replayed / trace nodes to replay over the whole run (every rank, every "
            "iteration), per job.",
            [target("sum by (run, job_name) (%s) / max by (run, job_name) (%s)" % (
                sel("etwire_job_nodes_completed_total", *rj),
                sel("etwire_job_nodes", *rj)), legend="{{job_name}}")])),
        (6, 6, stat(
            "Trace nodes",
            "Trace nodes replayed and to replay over the whole run, per job.",
            [target("sum by (run, job_name) (%s)" % sel("etwire_job_nodes_completed_total", *rj),
                    legend="{{job_name}} completed"),
             target("max by (run, job_name) (%s)" % sel("etwire_job_nodes", *rj),
                    legend="{{job_name}} planned")])),
        (12, 8, timeseries(
            "JCT per iteration",
            "Job completion time of the last completed measured iteration.",
            [target("max by (run, job_name) (%s)" % sel("etwire_iteration_jct_seconds", *rj),
                    legend="{{job_name}}")], unit="s")),
        (12, 8, timeseries(
            "Exposed communication per iteration",
            "Largest per-rank exposed communication time of the last completed measured "
            "iteration.",
            [target("max by (run, job_name) (%s)" % sel(
                "etwire_iteration_exposed_communication_seconds", *rj), legend="{{job_name}}")],
            unit="s")),
        (12, 8, timeseries(
            "Bus bandwidth, last collective per type",
            "Bus bandwidth of the last completed instance of each collective type, per job and "
            "algorithm (measured iterations).",
            [target("max by (run, job_name, collective, algorithm) (%s)" % sel(
                "etwire_collective_busbw_bytes_per_second", *rj),
                legend="{{job_name}} {{collective}} {{algorithm}}")], unit="Bps")),
        (12, 8, timeseries(
            "Algorithm bandwidth, last collective per type",
            "Algorithm bandwidth of the last completed instance of each collective type, per job "
            "and algorithm (measured iterations).",
            [target("max by (run, job_name, collective, algorithm) (%s)" % sel(
                "etwire_collective_algbw_bytes_per_second", *rj),
                legend="{{job_name}} {{collective}} {{algorithm}}")], unit="Bps")),
        (12, 8, timeseries(
            "Flows completed per second",
            "Flows completed per second of the data plane's clock, per collective type "
            "(measured iterations).",
            [target(per_second("etwire_flow_completion_seconds_count", "run, collective", *rj),
                    legend="{{collective}}")], unit="short", axis_label="flows/s")),
        (6, 8, stat(
            "Failed flows",
            "Flows that failed in measured iterations (etwire_flows_failed_total), per run.",
            [target("sum by (run) (%s)" % sel("etwire_flows_failed_total", *rj),
                    legend="{{run}}")],
            steps=[(None, "green"), (1, "red")], no_value="0")),
        (6, 8, stat(
            "Telemetry records dropped",
            "Telemetry records lost because a worker's buffer was full. Non-zero means the "
            "result files and metrics miss some flows or collectives.",
            [target("sum by (run) (%s)" % sel("etwire_telemetry_records_dropped_total", *rh),
                    legend="{{run}}")],
            steps=[(None, "green"), (1, "red")])),
    ]
    return dashboard(
        "etwire-overview", "etwire / Overview",
        "Run state, progress, iteration times and collective bandwidth of etwire runs.",
        ["datasource", "run", "host", "job"], panels)


def flows():
    rj = (RUN, HOST, JOB)
    fct, cct = "etwire_flow_completion_seconds", "etwire_collective_completion_seconds"
    by = "run, collective"
    panels = [
        (24, 9, heatmap(
            "FCT distribution",
            "Flow completion times of all selected jobs and collective types: each cell counts "
            "the flows completed in its bucket over the rate interval (measured iterations).",
            "sum by (le) (increase(%s%s))" % (sel(fct + "_bucket", *rj), WINDOW))),
        (12, 9, timeseries(
            "FCT quantiles per collective type",
            "p50, p90, p99 and p99.9 of the flow completion time over the rate interval, per "
            "collective type.",
            [target(quantile_over_window(q, fct, by, *rj), legend="{{collective}} %s" % name)
             for q, name in QUANTILES], unit="s", minimum=None)),
        (12, 9, timeseries(
            "CCT quantiles per collective type",
            "p50 and p99 of the collective completion time over the rate interval, per "
            "collective type.",
            [target(quantile_over_window(q, cct, by, *rj), legend="{{collective}} %s" % name)
             for q, name in QUANTILES if name in ("p50", "p99")], unit="s", minimum=None)),
        (12, 8, timeseries(
            "Flows per second per collective type",
            "Flows completed per second of the data plane's clock, per collective type.",
            [target(per_second(fct + "_count", by, *rj), legend="{{collective}}")],
            unit="short", axis_label="flows/s")),
        (12, 8, timeseries(
            "Collectives per second per collective type",
            "Collective instances completed per second of the data plane's clock, per "
            "collective type.",
            [target(per_second(cct + "_count", by, *rj), legend="{{collective}}")],
            unit="short", axis_label="collectives/s")),
        (24, 7, merged_table(
            "FCT over the run",
            "Flow completion times since the run started, per collective type: flows "
            "completed, quantiles, mean and failed flows (measured iterations).",
            [("flows", total_over_run(fct + "_count", by, *rj), "none")]
            + [(name, quantile_over_run(q, fct, by, *rj), None) for q, name in QUANTILES]
            + [("mean", mean_over_run(fct, by, *rj), None),
               ("failed flows", total_over_run("etwire_flows_failed_total", by, *rj), "none")],
            unit="s")),
        (24, 7, merged_table(
            "CCT over the run",
            "Collective completion times since the run started, per collective type: "
            "instances completed, quantiles and mean (measured iterations).",
            [("collectives", total_over_run(cct + "_count", by, *rj), "none")]
            + [(name, quantile_over_run(q, cct, by, *rj), None) for q, name in QUANTILES]
            + [("mean", mean_over_run(cct, by, *rj), None)],
            unit="s")),
    ]
    return dashboard(
        "etwire-flows", "etwire / Flows",
        "Flow and collective completion times of etwire runs, per collective type.",
        ["datasource", "run", "host", "job"], panels)


CONGESTION_COUNTERS = [
    # metric (etwire_port_<name>_total), panel title, total title, unit, description
    ("ecn_marked_packets", "ECN-marked packets per second", "ECN-marked packets", "pps",
     "CE-marked data packets received by the port."),
    ("cnps_sent", "CNPs sent per second", "CNPs sent", "pps",
     "Congestion notification packets the port sent (it received CE-marked packets)."),
    ("cnps_received", "CNPs received per second", "CNPs received", "pps",
     "Congestion notification packets the port received (DCQCN rate cuts)."),
    ("pfc_pause_frames_sent", "PFC pause frames sent per second", "PFC pause frames sent",
     "pps", "PFC pause frames the port sent."),
    ("pfc_pause_frames_received", "PFC pause frames received per second",
     "PFC pause frames received", "pps", "PFC pause frames the port received."),
    ("drops", "Drops per second", "Drops", "pps", "Packets dropped on the port's path."),
    ("retransmitted_packets", "Retransmitted packets per second", "Retransmitted packets", "pps",
     "Data packets the port's QPs sent again (go-back-N)."),
    ("timeouts", "Timeouts per second", "Timeouts", "short",
     "Retransmission timeouts of the port's QPs."),
]
# The totals row shows one direction of CNPs and PFC, so six stats fill the 24 columns.
TOTALS_LEFT_OUT = ("cnps_received", "pfc_pause_frames_received")

# The fabric twin's queue gauges: the graphs show this many series per run at each moment.
TWIN_TOP = 10
TWIN_ONLY = (
    " Only runs on the fabric twin (loopback ports) with telemetry.record.queue_sample_interval "
    "set have these series; the port variable does not apply to the twin's switch ports.")


def top_per_run(k, by, metric, *matchers):
    """The k largest series of each run at each moment, after taking the largest over hosts."""
    return "topk by (run) (%d, max by (%s) (%s))" % (k, by, sel(metric, *matchers))


def congestion():
    rp = (RUN, HOST, PORT)
    totals = [(4, 4, stat(
        total, description + " Total since the run started, over the selected ports.",
        [target("sum by (run) (%s)" % sel("etwire_port_%s_total" % name, *rp),
                legend="{{run}}")]))
        for name, _, total, _, description in CONGESTION_COUNTERS
        if name not in TOTALS_LEFT_OUT]
    rates = [(12, 8, timeseries(
        title, description + " Per second of the data plane's clock.",
        [target(per_second("etwire_port_%s_total" % name, "run, port", *rp), legend="{{port}}")],
        unit=unit, axis_label=None if unit == "pps" else "per second"))
        for name, title, _, unit, description in CONGESTION_COUNTERS]
    rh = (RUN, HOST)
    twin = [
        (12, 8, timeseries(
            "Deepest switch queues",
            "Bytes waiting in the fabric twin's switch egress queues at the last queue sample, "
            "per switch port and priority: the %d deepest queues of each run at each moment."
            % TWIN_TOP + TWIN_ONLY,
            [target(top_per_run(TWIN_TOP, "run, switch_port, priority",
                                "etwire_twin_queue_depth_bytes", *rh),
                    legend="{{switch_port}} priority {{priority}}")],
            unit="bytes")),
        (12, 8, timeseries(
            "Switch link utilisation",
            "Wire bytes each fabric twin switch port started over the last queue sample "
            "interval / what its link carries in that time: the %d busiest switch ports of each "
            "run at each moment. A frame counts in the interval it starts in, so a saturated "
            "link can read up to one frame above 1." % TWIN_TOP + TWIN_ONLY,
            [target(top_per_run(TWIN_TOP, "run, switch_port", "etwire_twin_link_utilization",
                                *rh), legend="{{switch_port}}")],
            unit="percentunit")),
    ]
    return dashboard(
        "etwire-congestion", "etwire / Congestion",
        "ECN, CNP, PFC, drop, retransmission and timeout counters of etwire runs, per port, and "
        "the fabric twin's switch queue depths and link utilisation.",
        ["datasource", "run", "host", "port"], totals + rates + twin)


def ports():
    rp = (RUN, HOST, PORT)
    speed = "max by (run, port) (%s)" % sel("etwire_port_speed_bytes_per_second", *rp)
    paced = "max by (run, port) (%s)" % sel("etwire_port_paced_rate_bytes_per_second", *rp)

    def throughput(direction):
        """Bytes per second: utilisation divides it by the speed, also in bytes."""
        return per_second("etwire_port_%s_bytes_total" % direction, "run, port", *rp)

    line_rate_dashed = [{
        "matcher": {"id": "byRegexp", "options": ".* line rate$"},
        "properties": [{"id": "custom.lineStyle",
                        "value": {"dash": [10, 10], "fill": "dash"}}],
    }]
    panels = [
        (12, 8, timeseries(
            "Transmit throughput",
            "Bits transmitted per second of the data plane's clock (wire bytes x 8, preamble "
            "and gap included, so a saturated link reads its line rate).",
            [target(bits_per_second(throughput("transmit")), legend="{{port}}")], unit="bps")),
        (12, 8, timeseries(
            "Receive throughput",
            "Bits received per second of the data plane's clock (wire bytes x 8, preamble and "
            "gap included).",
            [target(bits_per_second(throughput("receive")), legend="{{port}}")], unit="bps")),
        (12, 8, timeseries(
            "Transmit utilisation",
            "Transmit throughput / port speed (line rate).",
            [target("%s / on(run, port) %s" % (throughput("transmit"), speed),
                    legend="{{port}}")], unit="percentunit")),
        (12, 8, timeseries(
            "Receive utilisation",
            "Receive throughput / port speed (line rate).",
            [target("%s / on(run, port) %s" % (throughput("receive"), speed),
                    legend="{{port}}")], unit="percentunit")),
        (12, 8, timeseries(
            "Transmit packets per second",
            "Packets transmitted per second of the data plane's clock.",
            [target(per_second("etwire_port_transmit_packets_total", "run, port", *rp),
                    legend="{{port}}")], unit="pps")),
        (12, 8, timeseries(
            "Receive packets per second",
            "Packets received per second of the data plane's clock.",
            [target(per_second("etwire_port_receive_packets_total", "run, port", *rp),
                    legend="{{port}}")], unit="pps")),
        (12, 8, timeseries(
            "Paced rate vs line rate",
            "Sum of the DCQCN rates of the port's QPs that have data to send (at most the line "
            "rate), and the line rate (dashed).",
            [target(bits_per_second(paced), legend="{{port}} paced"),
             target(bits_per_second(speed), legend="{{port}} line rate")],
            unit="bps", overrides=line_rate_dashed)),
        (12, 8, timeseries(
            "Paced rate / line rate",
            "Paced rate as a fraction of the line rate; 1 when the port's QPs with data to "
            "send are not rate-limited.",
            [target("%s / on(run, port) %s" % (paced, speed), legend="{{port}}")],
            unit="percentunit")),
    ]
    return dashboard(
        "etwire-ports", "etwire / Ports",
        "Throughput, utilisation, packet rates and DCQCN paced rates of etwire runs, per port.",
        ["datasource", "run", "host", "port"], panels)


DASHBOARDS = {
    "etwire-overview.json": overview,
    "etwire-flows.json": flows,
    "etwire-congestion.json": congestion,
    "etwire-ports.json": ports,
}


def render(build):
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main():
    parser = argparse.ArgumentParser(description="Write the etwire Grafana dashboards.")
    parser.add_argument("--check", action="store_true",
                        help="compare instead of writing; exit 1 if a file is stale")
    args = parser.parse_args()
    stale = []
    for name, build in DASHBOARDS.items():
        path = os.path.join(HERE, name)
        text = render(build)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                stale.append(path)
                print("stale: %s (run python3 dashboards/generate.py)" % path, file=sys.stderr)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
