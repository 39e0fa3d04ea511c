#!/usr/bin/env python3
"""`etwire report` end to end: a small loopback run, its HTML report, rendered in headless Chromium.

    python3 tests/outputs/report_chromium_test.py --etwire build/release/etwire --source-dir . \
        [--case NAME ...] [--keep]

Cases:

  charts        A loopback run of configs/loopback-demo.yaml (queues sampled) and its report:
                Chromium (Debian package `chromium`) loads the page offline (--dump-dom) and every
                chart's box says Chart.js drew it with points (data-rendered, data-points > 0),
                the eight ports' throughput as eight small charts;
                the page holds the nccl-tests table; a screenshot (--screenshot) is not blank and
                shows the first series' colour. The page loads nothing from the network.
  missing_files The same run without flows.csv, ports.csv and queues.csv: the report is still
                written (exit 0), the charts that need them carry a note instead of points, and
                the busbw chart still draws.
  overlay       `etwire compare A B --tolerance 5 --report` on two runs of the demo, one at half
                the link speed: exit 4, the page opens with FAIL and the delta rows beyond 5 %
                marked, every chart draws, each with more points than one run's report has, the
                page names both runs' labels, and its screenshot is not blank.
  dpdk          configs/dpdk-ring.yaml (two net_ring ports on the wall clock, sampled every 1 ms)
                and its report: every chart but the twin's queue depth draws points, and the queue
                chart says why it has none. Exit 77 when DPDK cannot start here.
  sweep         A four-size `etwire sweep` of the demo and `etwire report` of its directory: the
                busbw and time against size charts draw a point per size, the table lists them,
                and the screenshot is not blank.
  bad_dir       A directory without summary.json: exit 2 and a message naming the missing path;
                a malformed ports.csv: exit 2 and a message naming the file and line.

Prints "ok NAME" or "FAIL NAME: why" per case; exit 0 when every selected case passed, 77 (skipped)
when chromium is not installed (scripts/setup.sh installs it). Standard library only.
"""

import argparse
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import traceback
import zlib

CHARTS = ["busbw", "fct_cdf", "port_throughput", "queue_depth", "congestion"]
FIRST_SERIES_COLOR = (0x1F, 0x77, 0xB4)  # the page's palette[0]
CHROMIUM_TIMEOUT_S = 120


class ChartBoxes(html.parser.HTMLParser):
    """Collects the attributes of every <div class="chart">, the small charts (<div
    class="panel">) in each, and the text of the page."""

    def __init__(self):
        super().__init__()
        self.charts = {}
        self.panels = {}
        self.current = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "div" and "chart" in classes:
            self.charts[attributes.get("data-chart")] = attributes
            self.current = attributes.get("data-chart")
        if tag == "div" and "panel" in classes:
            self.panels[self.current] = self.panels.get(self.current, 0) + 1

    def handle_data(self, data):
        self.text.append(data)


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)


def make_run(args, out, extra_sets=()):
    config = os.path.join(args.source_dir, "configs", "loopback-demo.yaml")
    argv = [args.etwire, "run", config, "--out", out, "--no-metrics",
            "--set", "telemetry.record.queue_sample_interval=2us", *extra_sets]
    result = run(argv)
    if result.returncode != 0:
        raise AssertionError(f"etwire run failed ({result.returncode}): {result.stderr[-2000:]}")


def make_report(args, run_dir):
    result = run([args.etwire, "report", run_dir])
    if result.returncode != 0:
        raise AssertionError(f"etwire report failed ({result.returncode}): {result.stderr}")
    page = os.path.join(run_dir, "report.html")
    if not os.path.exists(page):
        raise AssertionError(f"{page} not written")
    return page


def chromium(work, page, *mode):
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=work)
    argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={profile}", "--hide-scrollbars", "--window-size=1200,2400",
            "--virtual-time-budget=10000", *mode, "file://" + os.path.abspath(page)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S,
                            cwd=work)
    if result.returncode != 0:
        raise AssertionError(f"chromium failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def dump_dom(work, page):
    parser = ChartBoxes()
    parser.feed(chromium(work, page, "--dump-dom"))
    return parser


def png_pixels(path):
    """Decodes an 8-bit RGB or RGBA PNG: (width, height, channels, rows of bytes)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace != 0:
        raise AssertionError(f"{path}: PNG depth {depth} colour type {color} not handled")
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[i] = (line[i] + predictor) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def check_screenshot(path):
    width, height, channels, rows = png_pixels(path)
    inked = colored = 0
    for line in rows[::2]:
        for x in range(0, width * channels, channels * 2):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 235 or g < 235 or b < 235:
                inked += 1
            if (abs(r - FIRST_SERIES_COLOR[0]) < 24 and abs(g - FIRST_SERIES_COLOR[1]) < 24
                    and abs(b - FIRST_SERIES_COLOR[2]) < 24):
                colored += 1
    sampled = (height // 2) * (width // 2)
    if inked < sampled * 0.01:
        raise AssertionError(f"{path}: looks blank ({inked} of {sampled} sampled pixels inked)")
    if colored < 20:
        raise AssertionError(f"{path}: the first series' colour is hardly there ({colored} pixels):"
                             " no line drawn?")
    return inked, colored


def case_charts(args, work):
    run_dir = os.path.join(work, "run")
    make_run(args, run_dir)
    for name in ["summary.json", "collectives.csv", "flows.csv", "ports.csv", "queues.csv"]:
        if not os.path.exists(os.path.join(run_dir, name)):
            raise AssertionError(f"the run wrote no {name}")
    page = make_report(args, run_dir)
    text = open(page, encoding="utf-8").read()
    if re.search(r"""<script[^>]+src=|<link[^>]+href=["']?https?:""", text):
        raise AssertionError("the page loads something from outside itself")
    dom = dump_dom(work, page)
    for chart in CHARTS:
        box = dom.charts.get(chart)
        if box is None:
            raise AssertionError(f"no chart box {chart!r} in the page")
        if box.get("data-rendered") != "true" or int(box.get("data-points", "0")) <= 0:
            raise AssertionError(f"chart {chart!r} drew nothing: {box}")
    # Eight ports: more than overlay legibly, so a small chart each, every one drawn.
    if dom.panels.get("port_throughput") != 8 or "multiples" not in dom.charts[
            "port_throughput"].get("class", ""):
        raise AssertionError(f"port throughput: {dom.panels.get('port_throughput')} small "
                             "charts for 8 ports")
    page_text = " ".join(dom.text)
    for needed in ["busbw_GBps", "algbw_GBps", "all_reduce", "p99"]:
        if needed not in page_text:
            raise AssertionError(f"the page's tables lack {needed!r}")
    shot = os.path.join(work, "report.png")
    chromium(work, page, f"--screenshot={shot}")
    inked, colored = check_screenshot(shot)
    points = {c: dom.charts[c]["data-points"] for c in CHARTS}
    return f"points {points}; screenshot {inked} inked, {colored} in the first series' colour"


def case_missing_files(args, work):
    run_dir = os.path.join(work, "run-missing")
    make_run(args, run_dir)
    for name in ["flows.csv", "ports.csv", "queues.csv"]:
        os.remove(os.path.join(run_dir, name))
    page = make_report(args, run_dir)
    dom = dump_dom(work, page)
    for chart in ["fct_cdf", "port_throughput", "queue_depth", "congestion"]:
        box = dom.charts.get(chart) or {}
        if box.get("data-note") != "true" or box.get("data-points") != "0":
            raise AssertionError(f"chart {chart!r} without its file: {box}")
    if int(dom.charts["busbw"].get("data-points", "0")) <= 0:
        raise AssertionError("busbw drew nothing")
    page_text = " ".join(dom.text)
    for name in ["flows.csv", "ports.csv", "queues.csv"]:
        if name not in page_text:
            raise AssertionError(f"no note names {name}")
    return "notes instead of the three charts"


def case_sweep(args, work):
    out = os.path.join(work, "sweep")
    result = run([args.etwire, "sweep", os.path.join(args.source_dir, "configs",
                                                     "loopback-demo.yaml"),
                  "-b", "1KiB", "-e", "64KiB", "-f", "4", "-n", "2", "-w", "1", "--out", out])
    if result.returncode != 0:
        raise AssertionError(f"etwire sweep failed ({result.returncode}): {result.stderr[-2000:]}")
    report = run([args.etwire, "report", out])
    page = os.path.join(out, "report.html")
    if report.returncode != 0 or not os.path.exists(page):
        raise AssertionError(f"etwire report SWEEP_DIR failed ({report.returncode}): "
                             f"{report.stderr}")
    dom = dump_dom(work, page)
    for chart in ["sweep_busbw", "sweep_time"]:
        box = dom.charts.get(chart, {})
        # 1, 4, 16 and 64 KiB: one point each.
        if box.get("data-rendered") != "true" or box.get("data-points") != "4":
            raise AssertionError(f"chart {chart!r} of the sweep: {box}")
    if "64 KiB" not in " ".join(dom.text):
        raise AssertionError("the sweep's table lacks its largest size")
    shot = os.path.join(work, "sweep.png")
    chromium(work, page, f"--screenshot={shot}")
    check_screenshot(shot)
    return "busbw and time against size, 4 points each"


def case_bad_dir(args, work):
    empty = os.path.join(work, "not-a-run")
    os.makedirs(empty, exist_ok=True)
    result = run([args.etwire, "report", empty])
    summary = os.path.join(empty, "summary.json")
    if result.returncode != 2 or summary not in result.stderr:
        raise AssertionError(f"exit {result.returncode}, stderr {result.stderr!r}")
    run_dir = os.path.join(work, "run-bad")
    make_run(args, run_dir)
    ports = os.path.join(run_dir, "ports.csv")
    with open(ports, "a") as f:
        f.write("12x,host0" + ",0" * 15 + "\n")
    result = run([args.etwire, "report", run_dir])
    if result.returncode != 2 or not re.search(re.escape(ports) + r":\d+:", result.stderr):
        raise AssertionError(f"malformed ports.csv: exit {result.returncode}, "
                             f"stderr {result.stderr!r}")
    return "exit 2 naming the file"


def case_overlay(args, work):
    a, b = os.path.join(work, "fast"), os.path.join(work, "slow")
    make_run(args, a)
    make_run(args, b, ["--set", "ports[0].speed=50Gbps"])
    page = os.path.join(work, "both.html")
    # Half the link speed is far beyond 5 %: exit 4, and the page still written.
    result = run([args.etwire, "compare", a, b, "--labels", "full-speed,half-speed",
                  "--tolerance", "5", "--report", page])
    if result.returncode != 4 or not os.path.exists(page):
        raise AssertionError(f"etwire compare --tolerance 5 --report: exit {result.returncode}, "
                             f"expected 4 and a page: {result.stderr}")
    both = dump_dom(work, page)
    page_text = " ".join(both.text)
    if "FAIL: Beyond tolerance" not in page_text:
        raise AssertionError("the comparison's page does not open with its verdict")
    text = open(page, encoding="utf-8").read()
    if text.count('<tr class="marked">') < 1 or text.find("FAIL:") > text.find('id="chart-'):
        raise AssertionError("no delta row marked beyond its tolerance before the charts")
    shot = os.path.join(work, "compare.png")
    chromium(work, page, f"--screenshot={shot}")
    check_screenshot(shot)
    one = dump_dom(work, make_report(args, a))
    for chart in CHARTS:
        box, single = both.charts.get(chart), one.charts.get(chart)
        if box is None or box.get("data-rendered") != "true":
            raise AssertionError(f"chart {chart!r} of the comparison drew nothing: {box}")
        if int(box["data-points"]) <= int(single["data-points"]):
            raise AssertionError(f"chart {chart!r}: {box['data-points']} points for two runs, "
                                 f"{single['data-points']} for one")
    text = open(page, encoding="utf-8").read()
    for label in ["full-speed", "half-speed"]:
        if label not in text:
            raise AssertionError(f"the page never names {label!r}")
    return "every chart overlays both runs: " + ", ".join(
        f"{c} {both.charts[c]['data-points']}" for c in CHARTS)


def case_dpdk(args, work):
    run_dir = os.path.join(work, "ring")
    config = os.path.join(args.source_dir, "configs", "dpdk-ring.yaml")
    result = run([args.etwire, "run", config, "--out", run_dir, "--no-metrics",
                  "--set", "telemetry.record.port_sample_interval=1ms"])
    if result.returncode != 0 and "EAL" in result.stderr:
        raise Skip(f"DPDK cannot start here: {result.stderr[-300:]}")
    if result.returncode != 0:
        raise AssertionError(f"etwire run failed ({result.returncode}): {result.stderr[-2000:]}")
    dom = dump_dom(work, make_report(args, run_dir))
    for chart in CHARTS:
        box = dom.charts.get(chart, {})
        drew = box.get("data-rendered") == "true" and int(box.get("data-points", "0")) > 0
        if chart == "queue_depth":
            if drew or box.get("data-note") != "true":
                raise AssertionError(f"a DPDK run has no twin queues, yet: {box}")
        elif not drew:
            raise AssertionError(f"chart {chart!r} of the DPDK run drew nothing: {box}")
    return "every chart of the net_ring run drew, the queue chart says why it cannot: " + ", ".join(
        f"{c} {dom.charts[c].get('data-points')}" for c in CHARTS)


CASES = {"charts": case_charts, "dpdk": case_dpdk, "missing_files": case_missing_files, "overlay": case_overlay,
         "bad_dir": case_bad_dir, "sweep": case_sweep}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    if shutil.which("chromium") is None:
        print("SKIP: chromium is not installed (Debian package chromium; scripts/setup.sh "
              "installs it)")
        return 77
    work = tempfile.mkdtemp(prefix="etwire-report-test-")
    failed = skipped = 0
    try:
        for name in args.case or sorted(CASES):
            try:
                detail = CASES[name](args, work)
                print(f"ok {name}: {detail}", flush=True)
            except Skip as e:
                skipped += 1
                print(f"SKIP {name}: {e}", flush=True)
            except Exception as e:  # noqa: BLE001 - every failure is reported per case
                failed += 1
                print(f"FAIL {name}: {e}", flush=True)
                traceback.print_exc()
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failed:
        return 1
    return 77 if skipped else 0


class Skip(Exception):
    """A case that cannot run on this machine (DPDK's EAL does not start)."""


if __name__ == "__main__":
    sys.exit(main())
