#!/usr/bin/env python3
"""End-to-end test of etwire's telemetry against a real Prometheus and a real Pushgateway.

    python3 tests/telemetry/prometheus_e2e_test.py --etwire build/release/etwire --source-dir . \
        [--case NAME ...] [--keep]

What it proves, one case each:

  dashboards      A Prometheus (Debian package `prometheus`) scraping a paced loopback run (queues
                  sampled) every second gets the progress live, and every query of every
                  dashboard in dashboards/*.json (panel targets and templating variables, with
                  Grafana's variables substituted) parses and returns finite data for that run,
                  the twin's queue depth and link utilization panels included. The final
                  scraped values agree with the run's summary.json (trace nodes, transmitted bytes,
                  measured flows) and the run state is "completed". After the run's endpoint went
                  away, its panels read as Grafana shows them: the run-state panel has one tile,
                  "completed"; every table (the "over the run" ones, Run) still has the final
                  values (flows as in summary.json); and port throughput panels are in bits per second (a bits unit,
                  and throughput / utilisation = the port's speed in bits per second; the line
                  rate beside the paced rate is that speed).
  promtool        The exposition served during the linger (queues sampled) passes `promtool check
                  metrics`, and its etwire_* metric families are exactly the ones of
                  docs/monitoring.md's metric
                  reference, with the documented types and labels; every etwire_* series has the
                  same non-empty host label.
  address_in_use  A metrics port that is taken stops the run with exit code 2 and a message naming
                  the address, before the results directory is created.
  pushgateway     The final values pushed to a real Pushgateway (package `prometheus-pushgateway`)
                  are grouped by job="etwire", run and host, and are the final ones; an
                  unreachable Pushgateway only warns.
  no_metrics      --no-metrics neither listens (not even on a configured port that is taken)
                  nor pushes.

Every case prints "ok NAME (SECONDS s)" or "FAIL NAME: why"; the exit code is 0 only if every
selected case passed. Missing Prometheus binaries are failures (scripts/setup.sh installs them),
not skips. Only 127.0.0.1 is contacted. Standard library only.
"""

import argparse
import ctypes
import glob
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

RUN_NAME = "loopback-demo"
DEMO_CONFIG = "configs/loopback-demo.yaml"
KILL_GRACE_S = 5.0
POLL_S = 0.25

# Grafana variables in dashboard queries -> what the dashboards case puts in their place.
# $__range is the run's duration, filled in per run.
FIXED_VARIABLES = {
    "run": RUN_NAME,
    "host": ".*",
    "job": ".*",
    "port": ".*",
    "__rate_interval": "4s",
    "__interval": "1s",
}

# Proxies would route 127.0.0.1 elsewhere: neither this script nor its children use one.
NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Failure(Exception):
    """A check failed; the message says what was expected and what was found."""


# --- processes --------------------------------------------------------------------------------

def _die_with_parent():
    """In the child before exec: get SIGTERM if this script dies, even by SIGKILL (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort; the finally blocks are the main cleanup
        pass


def child_env():
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


class Processes:
    """Every process a case starts; stop_all() ends them: SIGTERM, then SIGKILL after 5 s."""

    def __init__(self):
        self.started = []

    def spawn(self, argv, **kwargs):
        proc = subprocess.Popen(argv, env=child_env(), preexec_fn=_die_with_parent,
                                stdin=subprocess.DEVNULL, **kwargs)
        self.started.append(proc)
        return proc

    def stop_all(self):
        for proc in reversed(self.started):
            stop_process(proc)
        self.started.clear()


def stop_process(proc):
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tail(path, lines=30):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read().splitlines()
    except OSError as e:
        return "(cannot read %s: %s)" % (path, e)
    return "\n".join("    | " + line for line in text[-lines:])


def require_binary(name, package):
    path = shutil.which(name)
    if path is None:
        raise Failure("%s not found on PATH: install the Debian package '%s' (apt-get install "
                      "%s; scripts/setup.sh installs it)" % (name, package, package))
    return path


class EtwireRun:
    """One `etwire run`: stderr is read line by line as it comes (with the time of each line),
    stdout goes to a file."""

    def __init__(self, procs, etwire, source_dir, workdir, args, name="etwire"):
        self.stdout_path = os.path.join(workdir, name + ".stdout")
        self.argv = [etwire, "run", os.path.join(source_dir, DEMO_CONFIG)] + args
        self.lines = []  # (monotonic time, text)
        self.cond = threading.Condition()
        self.started_at = time.time()
        with open(self.stdout_path, "wb") as out:
            self.proc = procs.spawn(self.argv, cwd=source_dir, stdout=out,
                                    stderr=subprocess.PIPE)
        self.reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.reader.start()
        self.ended_at = None

    def _read_stderr(self):
        for raw in self.proc.stderr:
            with self.cond:
                self.lines.append((time.time(), raw.decode("utf-8", "replace").rstrip("\n")))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def stderr(self):
        with self.cond:
            return "\n".join(text for _, text in self.lines)

    def wait_for_line(self, pattern, timeout):
        """The first stderr line matching the regex and its time; fails on timeout or exit."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for when, text in self.lines:
                    match = regex.search(text)
                    if match:
                        return match, when
                if not self.reader.is_alive():
                    raise Failure("etwire exited (code %s) without printing a line matching "
                                  "%r; stderr:\n%s"
                                  % (self.proc.poll(), pattern, indent(self.stderr())))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure("no stderr line matching %r from etwire within %.0f s; "
                                  "stderr:\n%s" % (pattern, timeout, indent(self.stderr())))
                self.cond.wait(min(left, POLL_S))

    def wait(self, timeout):
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure("etwire did not exit within %.0f s: %s\nstderr so far:\n%s"
                          % (timeout, " ".join(self.argv), indent(self.stderr())))
        self.ended_at = time.time()
        self.reader.join(timeout=5)
        return code

    def expect_exit(self, expected, timeout):
        code = self.wait(timeout)
        if code != expected:
            raise Failure("etwire exited with %d, expected %d: %s\nstderr:\n%s\nstdout tail:\n%s"
                          % (code, expected, " ".join(self.argv), indent(self.stderr()),
                             tail(self.stdout_path, 15)))


def indent(text):
    return "\n".join("    | " + line for line in text.splitlines()) or "    | (empty)"


# --- network ----------------------------------------------------------------------------------

def free_ports(count):
    """Ports free on 127.0.0.1 right now (bound together so they differ, then released)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def listening_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s


def http_get(url, timeout=5.0):
    """(status, body text); HTTP error statuses are returned, connection errors raise OSError."""
    assert url.startswith("http://127.0.0.1:"), url
    try:
        with NO_PROXY_OPENER.open(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def poll_until(what, timeout, probe, alive=None):
    """Calls probe() every 0.25 s until it returns something other than None; fails after
    `timeout` seconds, or at once when alive() says the server died (alive raises Failure)."""
    deadline = time.monotonic() + timeout
    last = "nothing yet"
    while time.monotonic() < deadline:
        if alive:
            alive()
        try:
            result = probe()
            if result is not None:
                return result
        except OSError as e:
            last = str(e)
        time.sleep(POLL_S)
    raise Failure("%s: not after %.0f s (last: %s)" % (what, timeout, last))


# --- the Prometheus text format ---------------------------------------------------------------

SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?\s*$")
LABEL_RE = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
TYPE_RE = re.compile(r"^#\s*TYPE\s+(\S+)\s+(\S+)")


def unescape(value):
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def parse_labels(text):
    labels, pos = {}, 0
    while pos < len(text.rstrip()):
        match = LABEL_RE.match(text, pos)
        if not match:
            raise Failure("cannot parse the labels {%s}" % text)
        labels[match.group(1)] = unescape(match.group(2))
        pos = match.end()
    return labels


def parse_exposition(text):
    """(types {family: type}, samples [(name, labels, value)])."""
    types, samples = {}, []
    for line in text.splitlines():
        if not line.strip():
            continue
        type_match = TYPE_RE.match(line)
        if type_match:
            types[type_match.group(1)] = type_match.group(2)
            continue
        if line.startswith("#"):
            continue
        match = SAMPLE_RE.match(line)
        if not match:
            raise Failure("cannot parse the exposition line %r" % line)
        samples.append((match.group(1), parse_labels(match.group(2) or ""),
                        float(match.group(3))))
    return types, samples


def family_of(name, types):
    if name in types:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[:-len(suffix)]
        if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
            return base
    return None


def find_samples(samples, name, **labels):
    return [(l, v) for n, l, v in samples
            if n == name and all(l.get(k) == want for k, want in labels.items())]


# --- Prometheus's HTTP API --------------------------------------------------------------------

class PrometheusApi:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port

    def call(self, path, **params):
        """The JSON answer; raises Failure on a non-JSON answer (a JSON error is returned)."""
        status, body = http_get(self.base + path + "?" + urllib.parse.urlencode(params), 10)
        try:
            answer = json.loads(body)
        except ValueError:
            raise Failure("Prometheus %s answered HTTP %d, not JSON: %s"
                          % (path, status, body[:300]))
        return answer

    def query(self, expr, at):
        return self.call("/api/v1/query", query=expr, time="%.3f" % at)

    def query_range(self, expr, start, end, step="1s"):
        return self.call("/api/v1/query_range", query=expr, start="%.3f" % start,
                         end="%.3f" % end, step=step)

    def scalar_at(self, expr, at):
        """The value of a query returning exactly one series, at `at`."""
        answer = self.query(expr, at)
        result = answer.get("data", {}).get("result", [])
        if answer.get("status") != "success" or len(result) != 1:
            raise Failure("%s at the end of the run: expected one series, got %s"
                          % (expr, describe(answer)))
        return float(result[0]["value"][1])


def describe(answer):
    if answer.get("status") != "success":
        return "status %s, %s: %s" % (answer.get("status"), answer.get("errorType"),
                                      answer.get("error"))
    result = answer["data"]["result"]
    if not result:
        return "no series"
    shown = []
    for series in result[:3]:
        values = series.get("values") or [series.get("value")]
        shown.append("%s: %s" % (series.get("metric"), [v[1] for v in values][:6]))
    more = " (and %d more series)" % (len(result) - 3) if len(result) > 3 else ""
    return "%d series, none with a finite value: %s%s" % (len(result), "; ".join(shown), more)


def has_finite_sample(series):
    for _, value in series.get("values", []):
        if math.isfinite(float(value)):
            return True
    return False


# --- dashboards -------------------------------------------------------------------------------

VARIABLE_RE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)")
LABEL_VALUES_RE = re.compile(r"^\s*label_values\(\s*(.+?)\s*,\s*(\w+)\s*\)\s*$")
LABEL_VALUES_1_RE = re.compile(r"^\s*label_values\(\s*(\w+)\s*\)\s*$")


def substitute(expr, variables):
    def replace(match):
        name = match.group(1) or match.group(2)
        if name not in variables:
            raise Failure("unknown Grafana variable $%s" % name)
        return variables[name]
    return VARIABLE_RE.sub(replace, expr)


def walk_panels(panels):
    for panel in panels:
        yield panel
        yield from walk_panels(panel.get("panels", []))


def dashboard_queries(source_dir):
    """(file, where, kind, query): kind "expr" for a panel target, "variable" for a templating
    query. Fails if there is no dashboard or no query at all."""
    files = sorted(glob.glob(os.path.join(source_dir, "dashboards", "*.json")))
    if not files:
        raise Failure("no dashboards/*.json under %s" % source_dir)
    queries = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            board = json.load(f)
        name = os.path.relpath(path, source_dir)
        for panel in walk_panels(board.get("panels", [])):
            for target in panel.get("targets", []):
                if target.get("expr"):
                    where = "panel %r target %s" % (panel.get("title"), target.get("refId"))
                    queries.append((name, where, "expr", target["expr"]))
        for variable in board.get("templating", {}).get("list", []):
            if variable.get("type") == "query":
                query = variable.get("query")
                if isinstance(query, dict):
                    query = query.get("query")
                queries.append((name, "variable $%s" % variable["name"], "variable", query))
    if not any(kind == "expr" for _, _, kind, _ in queries):
        raise Failure("no panel target in %s" % ", ".join(files))
    return queries


def check_expr(api, expr, start, end):
    """None if the range query returns a finite sample, else what came back."""
    answer = api.query_range(expr, start, end)
    if answer.get("status") != "success":
        return describe(answer)
    if any(has_finite_sample(s) for s in answer["data"]["result"]):
        return None
    return describe(answer)


def check_variable(api, query, start, end):
    """None if the variable has at least one value over the run, else what came back."""
    single = LABEL_VALUES_1_RE.match(query)
    if single:
        answer = api.call("/api/v1/label/%s/values" % single.group(1),
                          start="%.3f" % start, end="%.3f" % end)
        if answer.get("status") == "success" and answer.get("data"):
            return None
        return "label %s has no values: %s" % (single.group(1), answer)
    match = LABEL_VALUES_RE.match(query)
    if not match:
        return "not a label_values(METRIC{...}, LABEL) query"
    selector, label = match.groups()
    answer = api.query_range(selector, start, end)
    if answer.get("status") != "success":
        return "%s: %s" % (selector, describe(answer))
    series = answer["data"]["result"]
    if any(label in s["metric"] for s in series):
        return None
    if not series:
        return "%s over the run: no series" % selector
    seen = sorted({name for s in series for name in s["metric"]})
    return "%s over the run: %d series, none with a %s label (labels: %s)" % (
        selector, len(series), label, ", ".join(seen))


def check_dashboards(api, source_dir, variables, start, end):
    queries = dashboard_queries(source_dir)
    problems = []
    for path, where, kind, query in queries:
        try:
            resolved = substitute(query, variables)
        except Failure as e:
            problems.append((path, where, query, str(e)))
            continue
        check = check_variable if kind == "variable" else check_expr
        problem = check(api, resolved, start, end)
        if problem:
            problems.append((path, where, resolved, problem))
    if problems:
        listing = "\n".join("  %s, %s\n    expr: %s\n    got:  %s" % p for p in problems)
        raise Failure("%d of %d dashboard queries failed or had no finite value over the run:\n%s"
                      % (len(problems), len(queries), listing))
    return len(queries)


# --- panels as Grafana shows them -------------------------------------------------------------

# Grafana's units of bits per second (SI prefixes, as link speeds are given).
BITS_PER_SECOND_UNITS = ("bps", "Kbits", "Mbits", "Gbits", "Tbits")


def panels_titled(source_dir, predicate):
    """(file, panel) of every dashboard panel whose title satisfies predicate(title)."""
    found = []
    for path in sorted(glob.glob(os.path.join(source_dir, "dashboards", "*.json"))):
        with open(path, encoding="utf-8") as f:
            board = json.load(f)
        for panel in walk_panels(board.get("panels", [])):
            if predicate(panel.get("title", "")):
                found.append((os.path.relpath(path, source_dir), panel))
    return found


def shown_series(api, target, variables, start, at):
    """[(labels, value)]: what a panel target shows at `at`, as Grafana asks for it. An instant
    target is evaluated at `at`; a range target over start..at, each series reduced to its last
    finite value (the stat and table panels' "last not null")."""
    expr = substitute(target["expr"], variables)
    if target.get("instant"):
        answer = api.query(expr, at)
        if answer.get("status") != "success":
            raise Failure("%s: %s" % (expr, describe(answer)))
        return [(s["metric"], float(s["value"][1])) for s in answer["data"]["result"]
                if math.isfinite(float(s["value"][1]))]
    answer = api.query_range(expr, start, at)
    if answer.get("status") != "success":
        raise Failure("%s: %s" % (expr, describe(answer)))
    shown = []
    for series in answer["data"]["result"]:
        finite = [float(v) for _, v in series["values"] if math.isfinite(float(v))]
        if finite:
            shown.append((series["metric"], finite[-1]))
    return shown


def check_run_state_tiles(api, source_dir, variables, start, at):
    """The run-state panel shows one tile per run, the final state, once the run ended."""
    panels = panels_titled(source_dir, lambda title: title == "Run state")
    if not panels:
        raise Failure("no 'Run state' panel in dashboards/*.json")
    for path, panel in panels:
        tiles = [labels for target in panel["targets"]
                 for labels, _ in shown_series(api, target, variables, start, at)]
        states = sorted(labels.get("state", "?") for labels in tiles)
        if states != ["completed"]:
            raise Failure("%s, panel 'Run state' after the run ended: tiles %s, expected one tile "
                          "'completed' (one tile per run)" % (path, states))


def check_tables_after_the_run(api, source_dir, variables, start, at, summary):
    """Every table (the "over the run" tables, the Run table) still has the run's final values
    after the run ended."""
    panels = [(path, panel) for path, panel in panels_titled(source_dir, lambda title: True)
              if panel.get("type") == "table"]
    if not any("over the run" in panel["title"] for _, panel in panels):
        raise Failure("no 'over the run' table in dashboards/*.json")
    problems = []
    for path, panel in panels:
        for target in panel["targets"]:
            shown = shown_series(api, target, variables, start, at)
            if not shown:
                problems.append("  %s, panel %r target %s: no data after the run ended\n"
                                "    expr: %s" % (path, panel["title"], target.get("refId"),
                                                  substitute(target["expr"], variables)))
            if panel["title"] == "FCT over the run" and target.get("refId") == "A" and shown:
                flows = sum(value for _, value in shown)
                if flows != summary_measured_flows(summary):
                    problems.append("  %s, panel 'FCT over the run': %r flows after the run "
                                    "ended, summary.json fct[] has %r"
                                    % (path, flows, summary_measured_flows(summary)))
    if problems:
        raise Failure("tables lost the final values:\n" + "\n".join(problems))
    return len(panels)


def check_throughput_in_bits(api, source_dir, variables, start, end, summary):
    """Port throughput panels are in bits per second: their unit, and their values (throughput /
    utilisation at the same moment is the port's speed, which summary.json gives in bits/s)."""
    speeds = {port["name"]: float(port["speed_bps"]) for port in summary["ports"]}
    for direction in ("Transmit", "Receive"):
        found = panels_titled(source_dir, lambda t, d=direction: t == "%s throughput" % d)
        utilisation = panels_titled(source_dir, lambda t, d=direction: t == "%s utilisation" % d)
        if len(found) != 1 or len(utilisation) != 1:
            raise Failure("expected one '%s throughput' and one '%s utilisation' panel, found "
                          "%d and %d" % (direction, direction, len(found), len(utilisation)))
        path, panel = found[0]
        unit = panel["fieldConfig"]["defaults"].get("unit")
        if unit not in BITS_PER_SECOND_UNITS:
            raise Failure("%s, panel %r: unit %r, expected bits per second (one of %s)"
                          % (path, panel["title"], unit, ", ".join(BITS_PER_SECOND_UNITS)))

        def by_port_and_time(target):
            answer = api.query_range(substitute(target["expr"], variables), start, end)
            if answer.get("status") != "success":
                raise Failure("%s: %s" % (target["expr"], describe(answer)))
            return {(s["metric"].get("port"), t): float(v)
                    for s in answer["data"]["result"] for t, v in s["values"]}
        rates = by_port_and_time(panel["targets"][0])
        fractions = by_port_and_time(utilisation[0][1]["targets"][0])
        compared = 0
        for key, fraction in fractions.items():
            rate = rates.get(key)
            if rate is None or not math.isfinite(fraction) or fraction < 0.01:
                continue
            speed = speeds.get(key[0])
            if speed is None:
                raise Failure("port %r of %r is not in summary.json" % (key[0], panel["title"]))
            if abs(rate / fraction - speed) > 1e-6 * speed:
                raise Failure("%s, panel %r, port %s: throughput %g / utilisation %g = %g, "
                              "expected the port's speed %g bit/s"
                              % (path, panel["title"], key[0], rate, fraction, rate / fraction,
                                 speed))
            compared += 1
        if compared == 0:
            raise Failure("panel %r: no moment with a utilisation above 1%% to compare at"
                          % panel["title"])
    # The line rate beside the paced rate is the port's speed in bits per second.
    found = panels_titled(source_dir, lambda t: t == "Paced rate vs line rate")
    if len(found) != 1:
        raise Failure("expected one 'Paced rate vs line rate' panel, found %d" % len(found))
    path, panel = found[0]
    line_rate = [t for t in panel["targets"] if t.get("legendFormat", "").endswith("line rate")]
    if panel["fieldConfig"]["defaults"].get("unit") not in BITS_PER_SECOND_UNITS or not line_rate:
        raise Failure("%s, panel %r: expected a line rate target and a bits-per-second unit, "
                      "found unit %r" % (path, panel["title"],
                                         panel["fieldConfig"]["defaults"].get("unit")))
    for labels, value in shown_series(api, line_rate[0], variables, start, end):
        if value != speeds.get(labels.get("port")):
            raise Failure("%s, panel %r: port %s line rate %r, expected its speed %r bit/s"
                          % (path, panel["title"], labels.get("port"), value,
                             speeds.get(labels.get("port"))))


def check_after_the_run(api, source_dir, run, summary):
    """The panels as Grafana shows them once the run ended and its series went stale."""
    # Two scrape intervals after the endpoint closed: a scrape has failed and marked every series
    # of the run stale, as it is for anyone looking after a run.
    time.sleep(max(0.0, run.ended_at + 2.5 - time.time()))
    at = time.time()
    start = run.started_at - 1
    variables = dict(FIXED_VARIABLES, __range="%ds" % math.ceil(at - start))
    answer = api.query('etwire_run_state{run="%s"}' % RUN_NAME, at)
    if answer.get("status") != "success" or answer["data"]["result"]:
        raise Failure("the run's series should be stale %.1f s after it ended; got %s"
                      % (at - run.ended_at, describe(answer)))
    check_run_state_tiles(api, source_dir, variables, start, at)
    tables = check_tables_after_the_run(api, source_dir, variables, start, at, summary)
    check_throughput_in_bits(api, source_dir, variables, start, at, summary)
    return tables


# --- the results files ------------------------------------------------------------------------

def load_summary(results_dir):
    path = os.path.join(results_dir, "summary.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Failure("cannot read %s: %s" % (path, e))


def summary_tx_bytes(summary):
    return sum(port["tx_bytes"] for port in summary["ports"])


def summary_measured_flows(summary):
    """Flows of measured iterations: the FCT table counts exactly those."""
    return sum(entry["flows"] for entry in summary["fct"])


# --- cases ------------------------------------------------------------------------------------

PROMETHEUS_YML = """\
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: etwire
    static_configs:
      - targets: ["127.0.0.1:%d"]
"""


def start_prometheus(procs, workdir, prom_port, etwire_port):
    binary = require_binary("prometheus", "prometheus")
    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(PROMETHEUS_YML % etwire_port)
    log_path = os.path.join(workdir, "prometheus.log")
    with open(log_path, "wb") as log:
        proc = procs.spawn([binary, "--config.file=" + config,
                            "--storage.tsdb.path=" + os.path.join(workdir, "tsdb"),
                            "--web.listen-address=127.0.0.1:%d" % prom_port],
                           cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    return proc, log_path


def server_alive(proc, name, log_path):
    def alive():
        if proc.poll() is not None:
            raise Failure("%s exited with code %d; its log:\n%s"
                          % (name, proc.returncode, tail(log_path)))
    return alive


def wait_until_ready(name, port, timeout, alive):
    """Until the server on `port` answers /-/ready with 200. Prometheus answers its query API
    with 503 until its TSDB has started, which takes seconds on a busy machine."""
    def ready():
        status, _ = http_get("http://127.0.0.1:%d/-/ready" % port, timeout=2)
        return True if status == 200 else None
    poll_until("%s ready on 127.0.0.1:%d" % (name, port), timeout, ready, alive)


def wait_for_scrape_target(api, alive):
    """Until Prometheus has tried to scrape the etwire target once (up 0 counts)."""
    def probe():
        answer = api.query('up{job="etwire"}', time.time())
        if answer.get("status") == "success" and answer["data"]["result"]:
            return True
        return None
    poll_until("Prometheus scraping the target (up{job=\"etwire\"} has a series)", 30, probe,
               alive)


def check_live_scrapes(api, start, end):
    """The run was scraped while it ran: several successful scrapes, progress seen moving."""
    answer = api.query_range('up{job="etwire"}', start, end)
    ups = [float(v) for s in answer.get("data", {}).get("result", []) for _, v in s["values"]]
    # The step is the scrape interval, so each 1 is about one successful scrape.
    if sum(1 for v in ups if v == 1) < 5:
        raise Failure("Prometheus scraped the run successfully only at %d of %d steps (expected "
                      "about 10): up{job=\"etwire\"} = %s" % (ups.count(1.0), len(ups), ups))
    expr = 'etwire_job_nodes_completed_total{run="%s"}' % RUN_NAME
    answer = api.query_range(expr, start, end)
    values = {v for s in answer.get("data", {}).get("result", []) for _, v in s["values"]}
    if len(values) < 3:
        raise Failure("%s took only %d distinct values during the paced run (%s): the progress was "
                      "not seen live" % (expr, len(values), sorted(values, key=float)))


def check_final_values(api, summary, at):
    """The last scraped values equal the results files' numbers."""
    problems = []
    run = 'run="%s"' % RUN_NAME
    pairs = [
        ("trace nodes completed vs planned",
         "sum(etwire_job_nodes_completed_total{%s})" % run,
         api.scalar_at("sum(etwire_job_nodes{%s})" % run, at)),
        ("transmitted bytes vs summary.json ports[].tx_bytes",
         "sum(etwire_port_transmit_bytes_total{%s})" % run, summary_tx_bytes(summary)),
        ("measured flows vs summary.json fct[].flows",
         "sum(etwire_flow_completion_seconds_count{%s})" % run, summary_measured_flows(summary)),
        ("run state completed",
         'etwire_run_state{%s,state="completed"}' % run, 1),
    ]
    for what, expr, expected in pairs:
        got = api.scalar_at(expr, at)
        if got != expected:
            problems.append("  %s: %s = %r, expected %r" % (what, expr, got, expected))
    if problems:
        raise Failure("final values disagree with the run:\n" + "\n".join(problems))


def case_dashboards(ctx):
    etwire_port, prom_port = free_ports(2)
    prom, log_path = start_prometheus(ctx.procs, ctx.workdir, prom_port, etwire_port)
    api = PrometheusApi(prom_port)
    alive = server_alive(prom, "prometheus", log_path)
    try:
        wait_until_ready("prometheus", prom_port, 60, alive)
        wait_for_scrape_target(api, alive)
        results = os.path.join(ctx.workdir, "results")
        run = EtwireRun(ctx.procs, ctx.etwire, ctx.source_dir, ctx.workdir, [
            "--time-scale", "0.001", "--no-progress", "--out", results,
            "--set", "telemetry.metrics.listen=127.0.0.1:%d" % etwire_port,
            "--set", "telemetry.metrics.linger=3s",
            # The twin's queue gauges, which the Congestion dashboard charts, have series only
            # when queues are sampled.
            "--set", "telemetry.record.queue_sample_interval=100us"])
        run.expect_exit(0, timeout=45)
        alive()
        start, end = run.started_at - 1, run.ended_at + 3
        variables = dict(FIXED_VARIABLES,
                         __range="%ds" % math.ceil(run.ended_at - run.started_at))
        count = check_dashboards(api, ctx.source_dir, variables, start, end)
        check_live_scrapes(api, run.started_at, run.ended_at)
        # 2 s into the 3 s linger: a scrape of the final values has happened, and none can have
        # failed yet and marked the series stale (whatever etwire's shutdown takes).
        _, linger_at = run.wait_for_line(r"serving the final metrics at ", 1)
        summary = load_summary(results)
        check_final_values(api, summary, linger_at + 2)
        tables = check_after_the_run(api, ctx.source_dir, run, summary)
        return "%d dashboard queries; after the run: one run-state tile, %d tables, " \
            "throughput in bits" % (count, tables)
    except Failure as e:
        raise Failure("%s\nprometheus log tail:\n%s" % (e, tail(log_path, 15)))


def documented_metrics(source_dir):
    """{name: (type, {labels})} from docs/monitoring.md's metric reference table."""
    path = os.path.join(source_dir, "docs", "monitoring.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text.split("## Metric reference", 1)
    if len(section) != 2:
        raise Failure("%s has no '## Metric reference' section" % path)
    body = re.split(r"\n## ", section[1], 1)[0]
    metrics = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"`etwire_\w+`", cells[0]):
            labels = {l.strip() for l in cells[2].split(",") if l.strip()}
            metrics[cells[0].strip("`")] = (cells[1], labels)
    if not metrics:
        raise Failure("no metric rows in the metric reference table of %s" % path)
    return metrics


def exposed_families(text):
    """{family: (type, {label names})} of the etwire_* families of an exposition."""
    types, samples = parse_exposition(text)
    families = {n: (t, set()) for n, t in types.items() if n.startswith("etwire_")}
    for name, labels, _ in samples:
        family = family_of(name, types)
        if family in families:
            families[family][1].update(k for k in labels if k not in ("le", "quantile"))
        elif name.startswith("etwire_"):
            raise Failure("sample %s has no # TYPE line" % name)
    return families


def compare_with_docs(exposed, documented):
    problems = []
    for name in sorted(set(exposed) - set(documented)):
        problems.append("  %s is exposed but not in docs/monitoring.md" % name)
    for name in sorted(set(documented) - set(exposed)):
        problems.append("  %s is documented but not exposed" % name)
    for name in sorted(set(exposed) & set(documented)):
        (etype, elabels), (dtype, dlabels) = exposed[name], documented[name]
        if etype != dtype:
            problems.append("  %s: exposed as %s, documented as %s" % (name, etype, dtype))
        if elabels != dlabels:
            problems.append("  %s: exposed labels %s, documented %s"
                            % (name, sorted(elabels), sorted(dlabels)))
    if problems:
        raise Failure("the exposition and the metric reference differ:\n" + "\n".join(problems))


# docs/monitoring.md: "buckets 1, 2, 5 per decade from 1 us to 10 s".
DOCUMENTED_BUCKETS = sorted([float("%de%d" % (m, e)) for e in range(-6, 1) for m in (1, 2, 5)]
                            + [10.0, math.inf])


def check_buckets(text):
    """Every etwire_* histogram series has exactly the documented bucket bounds."""
    types, samples = parse_exposition(text)
    bounds = {}
    for name, labels, _ in samples:
        family = family_of(name, types)
        if family and family.startswith("etwire_") and name.endswith("_bucket"):
            series = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            bounds.setdefault((family, series), []).append(labels["le"])
    if not bounds:
        raise Failure("no etwire_* histogram buckets in the exposition")
    for (family, series), les in sorted(bounds.items()):
        if sorted(float(le) for le in les) != DOCUMENTED_BUCKETS:
            raise Failure("%s%s: bucket bounds le=%s, documented 1, 2, 5 per decade from 1e-06 "
                          "to 10 and +Inf" % (family, dict(series), les))


def check_one_host(text):
    """Every etwire_* sample has a host label, the same non-empty one; returns it."""
    _, samples = parse_exposition(text)
    hosts = {labels.get("host") for name, labels, _ in samples if name.startswith("etwire_")}
    if len(hosts) != 1 or not next(iter(hosts)):
        raise Failure("every etwire_* series should carry the same non-empty host label; "
                      "host values found: %s" % sorted(map(repr, hosts)))
    return hosts.pop()


def case_promtool(ctx):
    promtool = require_binary("promtool", "prometheus")
    run = EtwireRun(ctx.procs, ctx.etwire, ctx.source_dir, ctx.workdir, [
        "--no-progress", "--out", os.path.join(ctx.workdir, "results"),
        "--set", "telemetry.metrics.listen=127.0.0.1:0",
        "--set", "telemetry.metrics.linger=2s",
        # The twin's queue gauges have series only when queues are sampled, and the per-QP
        # series only behind their switch.
        "--set", "telemetry.record.queue_sample_interval=10us",
        "--set", "telemetry.metrics.per_qp=true"])
    match, _ = run.wait_for_line(r"metrics at (http://127\.0\.0\.1:\d+/metrics)", 15)
    url = match.group(1)
    run.wait_for_line(r"serving the final metrics at ", 15)
    status, exposition = http_get(url)
    if status != 200:
        raise Failure("GET %s during the linger: HTTP %d: %s" % (url, status, exposition[:300]))
    run.expect_exit(0, timeout=20)
    check = subprocess.run([promtool, "check", "metrics"], input=exposition.encode(),
                           capture_output=True, timeout=30, env=child_env())
    output = (check.stdout + check.stderr).decode("utf-8", "replace").strip()
    if check.returncode != 0 or output:
        raise Failure("promtool check metrics exited %d:\n%s" % (check.returncode, indent(output)))
    exposed = exposed_families(exposition)
    compare_with_docs(exposed, documented_metrics(ctx.source_dir))
    check_buckets(exposition)
    host = check_one_host(exposition)
    return "%d etwire_* families, host %s" % (len(exposed), host)


def case_address_in_use(ctx):
    holder = listening_socket()
    try:
        port = holder.getsockname()[1]
        results = os.path.join(ctx.workdir, "results")
        run = EtwireRun(ctx.procs, ctx.etwire, ctx.source_dir, ctx.workdir, [
            "--no-progress", "--out", results,
            "--set", "telemetry.metrics.listen=127.0.0.1:%d" % port])
        run.expect_exit(2, timeout=20)
    finally:
        holder.close()
    stderr = run.stderr()
    address = "127.0.0.1:%d" % port
    if address not in stderr or "in use" not in stderr.lower():
        raise Failure("stderr should name %s and say it is in use:\n%s" % (address, indent(stderr)))
    if os.path.exists(results):
        raise Failure("the results directory %s was created although the run did not start"
                      % results)


def start_pushgateway(procs, workdir):
    binary = require_binary("prometheus-pushgateway", "prometheus-pushgateway")
    port, = free_ports(1)
    log_path = os.path.join(workdir, "pushgateway.log")
    with open(log_path, "wb") as log:
        proc = procs.spawn([binary, "--web.listen-address=127.0.0.1:%d" % port,
                            "--persistence.file="],  # in memory, not /var/lib/prometheus
                           cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    alive = server_alive(proc, "prometheus-pushgateway", log_path)
    wait_until_ready("prometheus-pushgateway", port, 15, alive)
    return port, log_path


def check_pushed(gateway_port, run_name):
    status, text = http_get("http://127.0.0.1:%d/metrics" % gateway_port)
    if status != 200:
        raise Failure("GET the pushgateway's /metrics: HTTP %d" % status)
    _, samples = parse_exposition(text)
    group = {"run": run_name, "job": "etwire", "job_name": "allreduce"}
    completed = find_samples(samples, "etwire_job_nodes_completed_total", **group)
    planned = find_samples(samples, "etwire_job_nodes", **group)
    if len(completed) != 1 or len(planned) != 1:
        pushed = sorted({"%s%s" % (n, l) for n, l, _ in samples if n.startswith("etwire_job_")})
        raise Failure("the pushgateway should hold one etwire_job_nodes_completed_total and one "
                      "etwire_job_nodes with %s; it holds:\n%s"
                      % (group, indent("\n".join(pushed))))
    if completed[0][1] != planned[0][1]:
        raise Failure("pushed etwire_job_nodes_completed_total = %r, etwire_job_nodes = %r: the "
                      "pushed values are not the final ones" % (completed[0][1], planned[0][1]))
    # The group is the run's and the host's: the gateway's push_time_seconds of that group.
    host = completed[0][0].get("host")
    if not host:
        raise Failure("the pushed etwire_job_nodes_completed_total has no host label: %s"
                      % completed[0][0])
    if not find_samples(samples, "push_time_seconds", job="etwire", run=run_name, host=host):
        groups = sorted("%s" % l for n, l, _ in samples if n == "push_time_seconds")
        raise Failure("no pushgateway group with job=\"etwire\", run=%r, host=%r; groups:\n%s"
                      % (run_name, host, indent("\n".join(groups))))


def case_pushgateway(ctx):
    gateway_port, log_path = start_pushgateway(ctx.procs, ctx.workdir)
    try:
        run = EtwireRun(ctx.procs, ctx.etwire, ctx.source_dir, ctx.workdir, [
            "--no-progress", "--out", os.path.join(ctx.workdir, "results"),
            "--set", "telemetry.metrics.listen=127.0.0.1:0",
            "--set", "telemetry.metrics.pushgateway=http://127.0.0.1:%d" % gateway_port,
            "--set", "run.name=push-check"], name="pushed")
        run.expect_exit(0, timeout=30)
        if "warning" in run.stderr():
            raise Failure("etwire warned while pushing:\n%s" % indent(run.stderr()))
        check_pushed(gateway_port, "push-check")
    except Failure as e:
        raise Failure("%s\npushgateway log tail:\n%s" % (e, tail(log_path, 15)))

    closed_port, = free_ports(1)
    run = EtwireRun(ctx.procs, ctx.etwire, ctx.source_dir, ctx.workdir, [
        "--no-progress", "--out", os.path.join(ctx.workdir, "results-unreachable"),
        "--set", "telemetry.metrics.listen=127.0.0.1:0",
        "--set", "telemetry.metrics.pushgateway=http://127.0.0.1:%d" % closed_port],
        name="unreachable")
    run.expect_exit(0, timeout=60)
    if not re.search(r"(?m)^warning: pushgateway", run.stderr()):
        raise Failure("an unreachable pushgateway should give a 'warning: pushgateway' line on "
                      "stderr; stderr:\n%s" % indent(run.stderr()))


def listening_inodes():
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[3] == "0A":  # TCP_LISTEN
                inodes.add(fields[9])
    return inodes


def listening_sockets_of(pid):
    """Inodes of the TCP sockets process `pid` holds in LISTEN state."""
    mine = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        match = re.fullmatch(r"socket:\[(\d+)\]", link)
        if match:
            mine.add(match.group(1))
    return mine & listening_inodes()


def case_no_metrics(ctx):
    holder = listening_socket()
    try:
        port = holder.getsockname()[1]
        closed_port, = free_ports(1)
        results = os.path.join(ctx.workdir, "results")
        # Paced to ~1.6 s so the process can be looked at while it runs. A push to the closed
        # port would warn: no warning means no push was tried.
        run = EtwireRun(ctx.procs, ctx.etwire, ctx.source_dir, ctx.workdir, [
            "--no-metrics", "--no-progress", "--time-scale", "0.005", "--out", results,
            "--set", "telemetry.metrics.listen=127.0.0.1:%d" % port,
            "--set", "telemetry.metrics.pushgateway=http://127.0.0.1:%d" % closed_port])
        run.wait_for_line(r"^running ", 15)
        try:
            listening = listening_sockets_of(run.proc.pid)
        except FileNotFoundError:
            listening = set()  # already gone: the exit code and stderr still tell
        run.expect_exit(0, timeout=30)
    finally:
        holder.close()
    if listening:
        raise Failure("with --no-metrics, etwire listened on TCP sockets (inodes %s)"
                      % sorted(listening))
    if "metrics at" in run.stderr() or "pushgateway" in run.stderr():
        raise Failure("with --no-metrics, etwire served or pushed metrics:\n%s"
                      % indent(run.stderr()))
    status = load_summary(results).get("status")
    if status != "completed":
        raise Failure("summary.json status %r, expected 'completed'" % status)


CASES = {
    "dashboards": case_dashboards,
    "promtool": case_promtool,
    "address_in_use": case_address_in_use,
    "pushgateway": case_pushgateway,
    "no_metrics": case_no_metrics,
}


# --- driver -----------------------------------------------------------------------------------

class CaseContext:
    def __init__(self, args, workdir):
        self.etwire = args.etwire
        self.source_dir = args.source_dir
        self.workdir = workdir
        self.procs = Processes()


def run_case(name, args, root):
    workdir = os.path.join(root, name)
    os.makedirs(workdir)
    ctx = CaseContext(args, workdir)
    began = time.monotonic()
    try:
        note = CASES[name](ctx)
        ok = True
    except Failure as e:
        ok, message = False, str(e)
    except Exception:  # noqa: BLE001 - a bug here or an unexpected file layout: still a FAIL line
        ok, message = False, "unexpected error:\n" + indent(traceback.format_exc())
    finally:
        ctx.procs.stop_all()
    seconds = time.monotonic() - began
    if ok:
        print("ok %s (%.1f s)%s" % (name, seconds, " - %s" % note if note else ""), flush=True)
    else:
        print("FAIL %s: %s" % (name, message), flush=True)
    return ok


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--etwire", required=True, help="the etwire binary to test")
    parser.add_argument("--source-dir", required=True, help="the repository root")
    parser.add_argument("--case", action="append", choices=sorted(CASES),
                        help="run only this case (repeatable); default: every case")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    args.etwire = os.path.abspath(args.etwire)
    args.source_dir = os.path.abspath(args.source_dir)
    return args


def check_inputs(args):
    if not (os.path.isfile(args.etwire) and os.access(args.etwire, os.X_OK)):
        return "--etwire %s: not an executable file" % args.etwire
    if not os.path.isfile(os.path.join(args.source_dir, DEMO_CONFIG)):
        return "--source-dir %s: no %s there" % (args.source_dir, DEMO_CONFIG)
    return None


def raise_interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def main():
    args = parse_args()
    problem = check_inputs(args)
    if problem:
        print("FAIL setup: %s" % problem, flush=True)
        return 1
    # Interruptible even where SIGINT arrives ignored (a background job of a script).
    signal.signal(signal.SIGINT, raise_interrupt)
    signal.signal(signal.SIGTERM, raise_interrupt)
    root = tempfile.mkdtemp(prefix="etwire-telemetry-e2e-")
    failed = []
    try:
        for name in args.case or list(CASES):
            if not run_case(name, args, root):
                failed.append(name)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        return 130
    finally:
        if args.keep:
            print("kept %s" % root, flush=True)
        else:
            shutil.rmtree(root, ignore_errors=True)
    if failed:
        print("%d of %d cases failed: %s" % (len(failed), len(args.case or CASES),
                                            " ".join(failed)), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
