#!/usr/bin/env python3
"""etwire against devices under test that it did not write, each run beside the fabric twin's
prediction (docs/dut-validation.md).

    python3 tests/dut/dut_e2e_test.py --etwire build/release/etwire --source-dir . \
        --case NAME [--status-dir DIR] [--keep]

Cases:

  tbf_incast  Three senders at 50 Mb/s into one receiver behind a Linux bridge whose port toward
              it shapes with tbf (50 Mb/s, 64 KB queue, tail drop), a 1 MiB gather on four
              net_af_packet ports, DCQCN off: run --predict (the fabric twin with the same
              bottleneck) and etwire compare. Every flow completes through go-back-N; what the
              senders put on the wire is exactly what the shaper forwarded plus what it dropped;
              the receiver got every frame the shaper forwarded; every frame sent beyond the
              trace's own is counted as a retransmission. Replayed as sent (its capture), the
              twin's shaper drops within 20 % of the frames the lab's did and the last data frame
              arrives within 10 % of the lab's time (Release builds).
  ovs_allreduce  Open vSwitch with its DPDK datapath (tests/dut/ovs_dpdk.py) between two net_memif
              ports, explicit in_port -> output flows: the bundled 8-rank all-reduce (two
              iterations), then configs/mixed-allreduce-alltoall.yaml's two jobs (32 MiB ring
              all-reduces and 8 MiB all-to-alls, DCQCN on) on the same two ports, four ranks of
              each job per port, both run with --predict. Each completes with the same flows,
              each moving the same bytes, as on two net_ring ports cabled back to back; every
              frame etwire sent matched OVS's flow for its port (packets, and bytes plus 24 per
              frame of preamble, gap and FCS); what OVS took in reached the other port except
              what OVS counted as dropped toward it (its memif ring full); every retransmission
              has a missing packet or a timeout behind it; etwire compare of the prediction and
              the run succeeds. Lab and prediction CCT and busbw per collective type go to
              --record; no tolerance on the ideal sender's prediction is asserted (it measures
              the machine's cores: docs/dut-validation.md). The all-reduce then runs once more
              captured and is replayed as sent (etwire replay): port b's last data frame
              arrives within 10 % of the lab's time, and lost frames are within 20 (Release
              builds).
  ovs_ecn_mark  The same OVS with a flow rule above the forwarding ones marking CE
              (mod_nw_ecn:3) on every ECT(0) UDP 4791 frame from port a toward port b (the data;
              ACKs and CNPs go not-ECT), a 1 MiB all-to-all (two iterations, two QPs per peer),
              DCQCN on with a 200 Mb/s floor, run twice: the rule matched exactly a's data frames
              and the plain flow the rest; b counted every marked frame OVS delivered (OVS's drops
              toward b the only loss), a none. With min_time_between_cnps 0 the notification
              point answers every marked packet, so b's CNPs equal its marks, per QP and per
              port; with 4us (NVIDIA's default) each marked QP sent at least one CNP and at most
              one per mark (which marks fall in a QP's 4 us window depends on when the worker
              polled, recorded nowhere per packet: bounds only). a received b's CNPs (less OVS's
              drops toward a), every requester on a that got one cut its rate below its queue's
              pace, and b's requesters got none.
  ns3_red_ecn A 4 MiB gather between two net_af_packet ports through an ns-3 router
              (tests/dut/ns3_router.py): a 30 Mb/s point-to-point bottleneck whose queue is
              ns-3's RED with ECN (10/30 packets, max_p 0.1, 100-packet limit, on the instantaneous
              queue: --ns3-qw sets RED's averaging weight), the sender's port
              at 60 Mb/s, each port addressing its frames to the router (next_hop_mac). Run with
              --predict (the twin with the same bottleneck, thresholds and buffer) and compared,
              three times with DCQCN on and once off. Both: the router's queue saw exactly the frames
              the sender sent, what it forwarded reached the receiver's veth. DCQCN on: the flows
              complete, ns-3 marked CE, the receiver counted marks (never more than ns-3 made),
              sent CNPs that reached the sender, which cut its rate; the receiving port's
              capture holds as many CE-marked frames in and CNPs out as its counters say; on
              the instantaneous queue, over three runs a side (`etwire compare` of repeated
              runs), the lab's gather is within 10 % of the predictions and its CE marks and
              CNPs within 20 % (Release builds). DCQCN off: no CNPs, no cuts, and RED's queue overflows: drops
              and go-back-N retransmissions. Every run is also replayed as sent (`etwire
              replay` of its capture): on the instantaneous queue, per run, the twin fed what the
              lab sent delivers its last data frame within 10 % of the lab's time, and its CE
              marks and lost frames are within 20 % of the lab's (lost: or 20 frames); the same
              holds replayed with the device profile `etwire calibrate` fits to the three
              DCQCN-on runs (the DCQCN-off run held out of the fit). Goodput
              and completion time of lab and predictions go to --record. --ns3-point lossy runs
              a shallower RED on a 20 Mb/s link instead (recorded, not gated).
  any_ran     Fails unless at least one device case ran (rather than skipped) in this test run:
              reads the status files the cases left in --status-dir.

A device that cannot start on this machine skips its case (exit 77) with the device's own error.
The OVS cases pin OVS's PMD to CPU 1 and etwire's lcores as OVS_ETWIRE_LCORES says; for pinning
experiments ETWIRE_DUT_OVS_PMD_CPUS, ETWIRE_DUT_OVS_LCORES and ETWIRE_DUT_OVS_PMD_MAXSLEEP_US
override them (docs/dut-validation.md, "Pinning").
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ns3_cases  # noqa: E402
import ovs_cases  # noqa: E402
import tbf_cases  # noqa: E402
from dut_runs import Skip  # noqa: E402

SKIP = 77

DEVICE_CASES = {**tbf_cases.CASES, **ns3_cases.CASES, **ovs_cases.CASES}


def case_any_ran(args, work):
    if not args.status_dir or not os.path.isdir(args.status_dir):
        raise AssertionError("no --status-dir with the device cases' status files")
    statuses = {}
    for name in sorted(DEVICE_CASES):
        path = os.path.join(args.status_dir, name)
        if os.path.exists(path):
            with open(path) as f:
                statuses[name] = f.read().strip()
    ran = [name for name, status in statuses.items() if status.startswith("ok")]
    assert ran, f"no device case ran: {statuses or 'no status files'}"
    return f"ran: {', '.join(ran)}; " + "; ".join(f"{k}: {v}" for k, v in statuses.items())


CASES = {**DEVICE_CASES, "any_ran": case_any_ran}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--case", choices=sorted(CASES), action="append", required=True)
    parser.add_argument("--status-dir", help="where each device case leaves ok/skip/FAIL")
    parser.add_argument("--record", help="append each case's measured figures (JSON lines)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--ns3-router", help="the ns-3 router binary (default: "
                        "tests/etwire-dut-ns3-router beside --etwire)")
    parser.add_argument("--ns3-qw", type=float, default=1.0,
                        help="ns3_red_ecn: RED's queue weight (1: the instantaneous queue)")
    parser.add_argument("--ns3-point", choices=["case", "lossy"], default="case",
                        help="ns3_red_ecn: the router's operating point (tests/dut/ns3_cases.py, "
                        "NS3_POINTS); the tolerances are asserted at the case's, on the "
                        "instantaneous queue")
    args = parser.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
    if not args.ns3_router:
        args.ns3_router = os.path.join(os.path.dirname(os.path.abspath(args.etwire)), "tests",
                                       "etwire-dut-ns3-router")
    status = 0
    for name in args.case:
        work = tempfile.mkdtemp(prefix=f"etwire-dut-{name}-")
        start = time.monotonic()
        try:
            detail = CASES[name](args, work)
            line = f"ok {name} ({time.monotonic() - start:.1f} s): {detail}"
        except Skip as e:
            line = f"skip {name}: {e}"
            status = status or SKIP
        except Exception as e:  # noqa: BLE001 - report every failure the same way
            line = f"FAIL {name}: {e}"
            status = 1
        finally:
            if args.keep:
                print(f"  kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
        print(line)
        if args.status_dir and name in DEVICE_CASES:
            os.makedirs(args.status_dir, exist_ok=True)
            with open(os.path.join(args.status_dir, name), "w") as f:
                f.write(line + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
