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
import shutil
import sys
import tempfile

import yaml

# The modules beside this script; no __pycache__ left in the source tree by CI's --check.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generated_page  # noqa: E402  (beside this script)
import lb_case_findings  # noqa: E402
import lb_case_runs as lb  # noqa: E402
import lb_case_sections as sections_of  # noqa: E402

TOOL = "case-study-load-balancing"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A2A_CONFIG = os.path.join(ROOT, "configs", "case-study-load-balancing.yaml")
MIX_CONFIG = os.path.join(ROOT, "configs", "case-study-moe-mix.yaml")
# The mix's runs sample the queues as the all-to-all's configuration does; no event is added.
MIX_SAMPLES = ["telemetry.record.queue_sample_interval=50us"]


def run(etwire, config, out, name, settings):
    target = os.path.join(out, name)
    if etwire is None:  # --from: the files are there already
        return lb.Run(target)
    return lb.Run(generated_page.run_etwire(TOOL, etwire, config, target, name, settings))


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    generated_page.add_page_options(parser, ROOT)
    parser.add_argument("--out", help="keep the runs' result files here")
    parser.add_argument("--from", dest="kept", metavar="DIR",
                        help="read the result files of an earlier --out DIR; run nothing")
    args = parser.parse_args()
    if not args.kept:
        generated_page.require_etwire(parser, args.etwire)
    doc = args.check or args.write
    text = generated_page.read_page(TOOL, doc, sections_of.NAMES) if doc else None
    if args.kept:
        sections, images = today(None, args.kept)
    else:
        out = args.out or tempfile.mkdtemp(prefix="etwire-case-study-lb-")
        try:
            sections, images = today(args.etwire, out)
        finally:
            if not args.out:
                shutil.rmtree(out, ignore_errors=True)
    return generated_page.settle(TOOL, doc, bool(args.check), text, sections, images)


if __name__ == "__main__":
    sys.exit(main())
