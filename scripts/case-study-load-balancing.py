#!/usr/bin/env python3
"""Runs the case study of docs/case-study-load-balancing.md and makes its tables, findings and plots.

    scripts/case-study-load-balancing.py [--etwire BIN] [--out DIR] [--check DOC | --write DOC]

A 64-rank all-to-all (configs/case-study-load-balancing.yaml) and the all-reduce + MoE all-to-all
mix (configs/case-study-moe-mix.yaml), each under ECMP, flowlets, adaptive routing, switch
spraying and sender spraying, with go-back-N and with out-of-order receivers; then, for the
all-to-all, runs that probe reordering depth, other seeds and the fabric without DCQCN or without
paths to choose (about 80 s in all). Every number the page states about these runs comes from
here: each section of the page between `<!-- generated: NAME -->` and
`<!-- end of generated: NAME -->` is one this script makes, and so is each image of IMAGES.
Without --check or --write it prints the sections.

--write DOC   replaces those sections of DOC with today's, and writes the images beside it.
--check DOC   exits 1 naming each section or image that differs from today's (a number gone
              stale: run --write and read the diff), 0 when all agree.
--out DIR     keeps the runs' result files there (default: a temporary directory, removed).
--from DIR    runs nothing: reads the result files a run with --out DIR kept (to rework the
              page's words without waiting for the runs).

ETWIRE or --etwire names the binary (default build/release/etwire).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

# The modules beside this script; no __pycache__ left in the source tree by CI's --check.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lb_case_findings  # noqa: E402  (beside this script)
import lb_case_runs as lb  # noqa: E402
import lb_case_sections as sections_of  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A2A_CONFIG = os.path.join(ROOT, "configs", "case-study-load-balancing.yaml")
MIX_CONFIG = os.path.join(ROOT, "configs", "case-study-moe-mix.yaml")
# The mix's runs sample the queues as the all-to-all's configuration does; no event is added.
MIX_SAMPLES = ["telemetry.record.queue_sample_interval=50us"]
BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end of generated: \2 -->)", re.S)


def run(etwire, config, out, name, settings):
    target = os.path.join(out, name)
    if etwire is None:  # --from: the files are there already
        return lb.Run(target)
    args = [etwire, "run", config, "--out", target, "--no-progress", "--no-metrics"]
    for setting in settings:
        args += ["--set", setting]
    print(f"running {name}", file=sys.stderr)
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"case-study-load-balancing: the {name} run failed ({proc.returncode}):\n"
                 f"{proc.stderr[-2000:]}")
    return lb.Run(target)


def all_runs(etwire, out):
    """Every run the page reads, by name: a2a/NAME for the all-to-all, mix/NAME for the mix."""
    runs = {}
    for name, settings in lb.a2a_variants():
        runs["a2a/" + name] = run(etwire, A2A_CONFIG, os.path.join(out, "a2a"), name, settings)
    for name, settings in lb.mix_variants():
        runs["mix/" + name] = run(etwire, MIX_CONFIG, os.path.join(out, "mix"), name,
                                  settings + MIX_SAMPLES)
    return runs


def today(etwire, out):
    with open(A2A_CONFIG) as f:
        config = yaml.safe_load(f)
    runs = all_runs(etwire, out)
    made = sections_of.make(runs, config, lb_case_findings.findings)
    return ({name: body + "\n" for name, body in made.sections.items()}, made.images)


def read_doc(doc):
    with open(doc) as f:
        text = f.read()
    missing = set(sections_of.NAMES) - {m.group(2) for m in BLOCK.finditer(text)}
    if missing:
        sys.exit(f"case-study-load-balancing: {doc} has no generated section "
                 f"{', '.join(sorted(missing))} (<!-- generated: NAME --> ... "
                 "<!-- end of generated: NAME -->)")
    return text


def stale_images(doc, images):
    stale = []
    for name, body in images.items():
        path = os.path.join(os.path.dirname(os.path.abspath(doc)), name)
        if not os.path.exists(path) or open(path).read() != body:
            stale.append(name)
    return stale


def write(doc, text, sections, images):
    with open(doc, "w") as f:
        f.write(BLOCK.sub(lambda m: m.group(1) + sections.get(m.group(2), m.group(3))
                          + m.group(4), text))
    for name, body in images.items():
        path = os.path.join(os.path.dirname(os.path.abspath(doc)), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(body)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etwire", default=os.environ.get(
        "ETWIRE", os.path.join(ROOT, "build", "release", "etwire")))
    parser.add_argument("--out", help="keep the runs' result files here")
    parser.add_argument("--from", dest="kept", metavar="DIR",
                        help="read the result files of an earlier --out DIR; run nothing")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", metavar="DOC")
    mode.add_argument("--write", metavar="DOC")
    args = parser.parse_args()
    if not args.kept and not os.access(args.etwire, os.X_OK):
        parser.error(f"--etwire: {args.etwire} is not an executable (build it: scripts/setup.sh)")
    doc = args.check or args.write
    text = read_doc(doc) if doc else None
    if args.kept:
        sections, images = today(None, args.kept)
    else:
        out = args.out or tempfile.mkdtemp(prefix="etwire-case-study-lb-")
        try:
            sections, images = today(args.etwire, out)
        finally:
            if not args.out:
                shutil.rmtree(out, ignore_errors=True)
    if not doc:
        for name, body in sections.items():
            print(f"<!-- generated: {name} -->\n{body}<!-- end of generated: {name} -->\n")
        return 0
    stale = [m.group(2) for m in BLOCK.finditer(text) if m.group(3) != sections.get(m.group(2))]
    stale += stale_images(doc, images)
    if args.check:
        if stale:
            print(f"{doc}: {', '.join(stale)} differ from what the runs give today; run "
                  f"scripts/case-study-load-balancing.py --write {doc} and read the diff",
                  file=sys.stderr)
            return 1
        print(f"{doc}: every generated section and image is today's")
        return 0
    write(doc, text, sections, images)
    print(f"{doc}: {len(stale)} part(s) rewritten" + (f": {', '.join(stale)}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
