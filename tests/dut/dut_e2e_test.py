#!/usr/bin/env python3
"""etwire against devices under test that it did not write, each run beside the fabric twin's
prediction (docs/dut-validation.md).

    python3 tests/dut/dut_e2e_test.py --etwire build/release/etwire --source-dir . \
        --case NAME [--status-dir DIR] [--keep]

Cases:

  tbf_incast  Three senders at 200 Mb/s into one receiver behind a Linux bridge whose port toward
              it shapes with tbf (200 Mb/s, 64 KB queue, tail drop), a 1 MiB gather on four
              net_af_packet ports, DCQCN off: run --predict (the fabric twin with the same
              bottleneck) and etwire compare. Every flow completes through go-back-N; what the
              senders put on the wire is exactly what the shaper forwarded plus what it dropped;
              the receiver got every frame the shaper forwarded; every frame sent beyond the
              trace's own is counted as a retransmission.
  any_ran     Fails unless at least one device case ran (rather than skipped) in this test run:
              reads the status files the cases left in --status-dir.

A device that cannot start on this machine skips its case (exit 77) with the device's own error.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netns import DeviceUnavailable, Namespace  # noqa: E402
from tbf_bridge import TbfBridge  # noqa: E402

SKIP = 77


class Skip(Exception):
    pass


def etwire(args, *cmd, ns=None, timeout=300, check=True):
    prefix = ["ip", "netns", "exec", ns.name] if ns else []
    proc = subprocess.run([*prefix, args.etwire, *cmd], capture_output=True, text=True,
                          timeout=timeout)
    if "EAL did not start" in proc.stderr:
        raise Skip("DPDK cannot initialise here: " + proc.stderr.strip().splitlines()[-1])
    if check and proc.returncode != 0:
        raise AssertionError(f"etwire {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def load_summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def af_packet_port(name, index, mac, speed, lcore=None):
    # A deep socket ring: the host end of a veth has no flow control toward the bridge.
    dpdk = f'vdev: "net_af_packet{index},iface=etw{index},framecnt=4096"'
    if lcore is not None:
        dpdk += f", lcore: {lcore}"
    return (f"  - name: {name}\n    backend: dpdk\n    dpdk: {{{dpdk}}}\n    speed: {speed}\n"
            f"    mtu: 1500\n    mac: {mac}\n")


def twin_buffer(queue_bytes, ports, reserve):
    """fabric.buffer for a twin switch whose queue toward one port holds queue_bytes in all, as
    the shaper's limit does: per-port shares, and what the other ports' ingress reserves add."""
    share = queue_bytes - (ports - 1) * reserve
    return {"size": ports * (share + reserve), "mode": "per-port", "ingress_reserve": reserve}


def case_tbf_incast(args, work):
    trace = os.path.join(work, "gather")
    etwire(args, "synth", "microbench", "-c", "gather", "-b", "1MiB", "-n", "4", "-i", "1",
           "-o", trace)
    macs = [f"02:00:00:00:00:1{i}" for i in range(4)]
    rate_bps, limit_bytes = 50_000_000, 64 * 1024
    buffer = twin_buffer(limit_bytes, ports=4, reserve=2048)
    speed = f"{rate_bps // 1_000_000}Mbps"
    # The receiving port polls on a worker lcore of its own: with all four ports on the main
    # lcore its socket ring overflowed (docs/dut-validation.md, "Pinning").
    ports = af_packet_port("rx", 0, macs[0], speed, lcore=1) + "".join(
        af_packet_port(f"tx{i}", i, macs[i], speed) for i in (1, 2, 3))
    out = os.path.join(work, "out")
    config = os.path.join(work, "tbf.yaml")
    with open(config, "w") as f:
        f.write(f"""run:
  name: dut-tbf-incast
  watchdog: 20s
workload:
  iterations: 1
  warmup_iterations: 0
  jobs:
    - name: gather
      trace: {trace}
dpdk:
  eal_args: ["--no-pci", "--no-huge", "--no-shconf", "-m", "512", "-l", "0,1"]
  mbufs: 4095
ports:
{ports}mapping:
  jobs:
    - job: gather
      placement: block
      ranks_per_port: 1
transport:
  op: write-with-imm
  pmtu: 1024
  dcqcn: {{enabled: false}}
fabric:
  topology: single-switch
  buffer: {{size: {buffer['size']}, mode: {buffer['mode']}, ingress_reserve: {buffer['ingress_reserve']}}}
  ecn: {{enabled: false}}
telemetry:
  output_dir: {out}
""")
    try:
        with Namespace("tbf") as ns, TbfBridge(ns, macs, rate=f"{rate_bps // 1_000_000}mbit",
                                               limit=f"{limit_bytes // 1024}kb") as bridge:
            before = bridge.counters()
            run = etwire(args, "run", config, "--predict", "--no-metrics", ns=ns, check=False)
            after = bridge.counters()
    except DeviceUnavailable as e:
        raise Skip(f"tbf bridge: {e}")
    device = {k: after[k] - before[k] for k in after}
    measured, predicted = load_summary(out), load_summary(os.path.join(out, "prediction"))

    # Exit 1 is a run whose flows failed (the summary says which); anything else is an error.
    assert run.returncode in (0, 1), f"etwire run exited {run.returncode}:\n{run.stderr}"
    assert measured["status"] == "completed", (measured["status"], measured["failed_by_status"])
    assert measured["failed_flows"] == 0 and measured["flows"] == 3, measured
    rx, *senders = measured["ports"]
    sent = sum(p["tx_packets"] for p in senders)
    original = 3 * 1024  # each sender's 1 MiB in 1 KiB packets
    retransmitted = sum(p["retransmitted_packets"] for p in senders)
    # The shaper saw every frame the senders sent, and nothing else.
    assert sent == device["shaper_sent"] + device["shaper_dropped"], (sent, device)
    # What it forwarded reached the receiver's veth end and etwire's port, all of it.
    assert device["host_received"] == device["shaper_sent"], device
    assert rx["rx_packets"] == device["shaper_sent"], (rx["rx_packets"], device)
    # Frames beyond the trace's own are retransmissions, each counted once; an incast three
    # times the bottleneck must have lost some and recovered them.
    assert sent - original == retransmitted, (sent, original, retransmitted)
    assert device["shaper_dropped"] > 0 and retransmitted > 0, device
    assert rx["missing_packets"] > 0, rx

    compare = etwire(args, "compare", os.path.join(out, "prediction"), out, check=False)
    assert compare.returncode in (0, 1), compare.stderr
    cct = measured["collectives"][0]["cct_ns"]
    ideal_ns = original * (1024 + 58 + 20) * 8 / rate_bps * 1e9
    record = {
        "device": "tbf", "shaper_sent": device["shaper_sent"],
        "shaper_dropped": device["shaper_dropped"], "etwire_sent": sent,
        "etwire_retransmitted": retransmitted, "receiver_got": rx["rx_packets"],
        "cct_ms": cct / 1e6, "bottleneck_share": ideal_ns / cct,
        "prediction_status": predicted["status"],
        "prediction_cct_ms": predicted["collectives"][0]["cct_ns"] / 1e6,
        "prediction_retransmitted": sum(p["retransmitted_packets"] for p in predicted["ports"]),
        "prediction_failed_flows": predicted["failed_flows"],
    }
    if args.record:
        with open(args.record, "a") as f:
            f.write(json.dumps(record) + "\n")
    return (f"shaper forwarded {device['shaper_sent']} and dropped {device['shaper_dropped']} of "
            f"{sent} frames, {retransmitted} retransmitted, gather {cct / 1e6:.0f} ms "
            f"({100 * ideal_ns / cct:.0f}% of the bottleneck); prediction: "
            f"{predicted['status']}, {record['prediction_cct_ms']:.0f} ms, "
            f"{record['prediction_failed_flows']} flows failed")


DEVICE_CASES = {"tbf_incast": case_tbf_incast}


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
    args = parser.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
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
