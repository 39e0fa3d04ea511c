#!/usr/bin/env python3
"""Makes the tables of docs/dut-validation.md that rest on recorded sittings of lab runs.

    scripts/dut-validation.py [--etwire BIN] [--record FILE] [--tbf-record FILE]
                              [--tbf-one-spinner-record FILE] [--tbf-two-spinners-record FILE]
                              [--ovs-record FILE] [--ovs-first-record FILE]
                              [--check DOC | --write DOC]

The lab's figures come from recorded sittings, the lines `tests/dut/dut_e2e_test.py --case NAME
--record FILE` appends, each dated by its file's name:
- the ns-3 router's runs at three operating points, and their predictions as sent and
  calibrated, which replay the lab's own captures: --record (default
  docs/data/ns3-red-2026-12-02.jsonl; `--case ns3_red_ecn [--ns3-qw Q] [--ns3-point P]`);
- the tbf bridge's runs on a quiet machine, with their predictions as sent: --tbf-record
  (default docs/data/tbf-bridge-2026-12-02.jsonl); beside a process spinning on one CPU:
  --tbf-one-spinner-record (default docs/data/tbf-bridge-one-spinner-2026-12-02.jsonl); and
  beside one on each CPU: --tbf-two-spinners-record (default
  docs/data/tbf-bridge-two-spinners-2026-12-02.jsonl);
- Open vSwitch's runs of both cases: --ovs-record (default docs/data/ovs-dpdk-2026-12-02.jsonl;
  `--case ovs_allreduce --case ovs_ecn_mark`), and an earlier sitting it is compared with:
  --ovs-first-record (default docs/data/ovs-dpdk-2026-12-02-first.jsonl).
Every ideal sender's prediction is the fabric twin's, run today from the configuration the
case builds with its ports on the twin (about 20 s): a change that moves it leaves the page stale
until it is rewritten. Without --check or --write the sections are printed.

--write DOC   replaces the generated sections of DOC with today's.
--check DOC   exits 1 naming each generated section of DOC that differs from today's.

ETWIRE or --etwire names the binary (default build/release/etwire).
"""

import argparse
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "dut"))
sys.path.insert(0, os.path.join(ROOT, "tests", "testing"))
import dut_tables_ns3  # noqa: E402  (beside this script)
import dut_tables_ovs  # noqa: E402
import dut_tables_tbf  # noqa: E402
import generated_page  # noqa: E402
from dut_tables_common import TOOL, read_record  # noqa: E402

SECTIONS = ["tbf_as_sent", "tbf_load", "ns3_lab_runs", "ns3_lab_findings", "ns3_as_sent",
            "ns3_ideal_sender", "ns3_jitter", "ovs_runs", "ovs_findings", "ovs_ecn"]
DATA = os.path.join(ROOT, "docs", "data")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    generated_page.add_page_options(parser, ROOT)
    parser.add_argument("--record", default=os.path.join(DATA, "ns3-red-2026-12-02.jsonl"))
    parser.add_argument("--tbf-record", default=os.path.join(DATA, "tbf-bridge-2026-12-02.jsonl"))
    parser.add_argument("--tbf-one-spinner-record",
                        default=os.path.join(DATA, "tbf-bridge-one-spinner-2026-12-02.jsonl"))
    parser.add_argument("--tbf-two-spinners-record",
                        default=os.path.join(DATA, "tbf-bridge-two-spinners-2026-12-02.jsonl"))
    parser.add_argument("--ovs-record", default=os.path.join(DATA, "ovs-dpdk-2026-12-02.jsonl"))
    parser.add_argument("--ovs-first-record",
                        default=os.path.join(DATA, "ovs-dpdk-2026-12-02-first.jsonl"))
    args = parser.parse_args()
    generated_page.require_etwire(parser, args.etwire)
    quiet = read_record(args.tbf_record)
    sittings = [("nothing else running", quiet),
                ("a spinner on CPU 0", read_record(args.tbf_one_spinner_record)),
                ("a spinner on each CPU", read_record(args.tbf_two_spinners_record))]
    doc = args.check or args.write
    text = generated_page.read_page(TOOL, doc, SECTIONS) if doc else None
    work = tempfile.mkdtemp(prefix="etwire-dut-validation-")
    try:
        # Each device's configurations and traces in a folder of their own.
        for name in ("tbf", "ns3", "ovs"):
            os.mkdir(os.path.join(work, name))
        today = {**dut_tables_tbf.sections(args.etwire, os.path.join(work, "tbf"), quiet,
                                           sittings),
                 **dut_tables_ns3.sections(args.etwire, os.path.join(work, "ns3"),
                                           read_record(args.record)),
                 **dut_tables_ovs.sections(args.etwire, os.path.join(work, "ovs"), ROOT,
                                           read_record(args.ovs_record),
                                           read_record(args.ovs_first_record))}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return generated_page.settle(TOOL, doc, bool(args.check), text, today)


if __name__ == "__main__":
    sys.exit(main())
