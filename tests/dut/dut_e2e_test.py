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
  ns3_red_ecn A 4 MiB gather between two net_af_packet ports through an ns-3 router
              (tests/dut/ns3_router.py): a 30 Mb/s point-to-point bottleneck whose queue is
              ns-3's RED with ECN (10/30 packets, max_p 0.1, 100-packet limit, on the instantaneous
              queue: --ns3-qw sets RED's averaging weight), the sender's port
              at 60 Mb/s, each port addressing its frames to the router (next_hop_mac). Run with
              --predict (the twin with the same bottleneck, thresholds and buffer) and compared,
              once with DCQCN on and once off. Both: the router's queue saw exactly the frames
              the sender sent, what it forwarded reached the receiver's veth. DCQCN on: the flows
              complete, ns-3 marked CE, the receiver counted marks (never more than ns-3 made),
              sent CNPs that reached the sender, which cut its rate. DCQCN off: no CNPs, no
              cuts, and RED's queue overflows: drops and go-back-N retransmissions.
              Goodput and completion time of lab and prediction are reported (--record), not
              held to a tolerance.
  any_ran     Fails unless at least one device case ran (rather than skipped) in this test run:
              reads the status files the cases left in --status-dir.

A device that cannot start on this machine skips its case (exit 77) with the device's own error.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netns import DeviceUnavailable, Namespace  # noqa: E402
from ns3_router import Ns3Router  # noqa: E402
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


# What a RoCEv2 data frame of the case's path MTU is on the wire: 1024 payload bytes, Ethernet,
# IPv4, UDP, BTH, ICRC (RETH on a message's first packet is left out). ns-3's RED counts IP
# packets, the twin bytes: its thresholds are the packet thresholds times this.
NS3_FRAME_BYTES = 1024 + 14 + 20 + 8 + 12 + 4


def ns3_config(work, trace, out, macs, *, dcqcn, bottleneck_bps, sender_bps, red):
    """Two net_af_packet ports on either side of the ns-3 router: "rx" (side a, rank 0, the
    gather's root) and "tx" (side b, rank 1). Each addresses its frames to the router's MAC on
    its side. The twin gets the same bottleneck: rx's port at the bottleneck rate (the twin's
    switch port toward it is the queue), ECN thresholds and buffer of RED's, marking at enqueue
    as RED does."""
    ports = ""
    for i, (name, speed) in enumerate((("rx", bottleneck_bps), ("tx", sender_bps))):
        ports += (f"  - name: {name}\n    backend: dpdk\n"
                  f'    dpdk: {{vdev: "net_af_packet{i},iface=etw{i},framecnt=4096"}}\n'
                  f"    speed: {speed // 1_000_000}Mbps\n    mtu: 1500\n    mac: {macs[i]}\n"
                  f"    ipv4: {Ns3Router.HOST_IPS[i]}\n"
                  f"    next_hop_mac: {Ns3Router.ROUTER_MACS[i]}\n")
    buffer = twin_buffer(red["max_size"] * NS3_FRAME_BYTES, ports=2, reserve=2048)
    config = os.path.join(work, f"ns3-dcqcn-{'on' if dcqcn else 'off'}.yaml")
    with open(config, "w") as f:
        f.write(f"""run:
  name: dut-ns3-red-ecn
  watchdog: 20s
workload:
  iterations: 1
  warmup_iterations: 0
  jobs:
    - name: gather
      trace: {trace}
dpdk:
  eal_args: ["--no-pci", "--no-huge", "--no-shconf", "-m", "512", "-l", "0"]
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
  # NVIDIA's timers are for 100 Gb/s, where a 1 KB frame takes 80 ns; here it takes 280 us at
  # the bottleneck. Scaled so that CNPs, cuts and increases come every few frames, not faster.
  dcqcn: {{enabled: {str(dcqcn).lower()}, min_time_between_cnps: 2ms, rate_reduce_period: 2ms,
          alpha_update_period: 2ms, rate_increase_period: 20ms, additive_increase: 1Mbps,
          hyper_increase: 5Mbps, min_rate: 5Mbps, clamp_target_rate: true}}
fabric:
  topology: single-switch
  propagation_delay: 25us
  buffer: {{size: {buffer['size']}, mode: {buffer['mode']}, ingress_reserve: {buffer['ingress_reserve']}}}
  ecn: {{enabled: true, kmin: {red['min_th'] * NS3_FRAME_BYTES}, kmax: {red['max_th'] * NS3_FRAME_BYTES}, pmax: {1 / red['l_interm']}, mark_at: enqueue}}
telemetry:
  output_dir: {out}
""")
    return config


def qp_sums(out):
    """Per-QP counters of qps.csv summed over the run's QPs."""
    with open(os.path.join(out, "qps.csv")) as f:
        rows = list(csv.DictReader(f))
    sums = {}
    for row in rows:
        for k, v in row.items():
            try:
                sums[k] = sums.get(k, 0) + float(v)
            except (TypeError, ValueError):
                pass
    return sums


def ns3_run(args, work, trace, macs, *, dcqcn, red, bottleneck_bps, sender_bps):
    out = os.path.join(work, f"out-dcqcn-{'on' if dcqcn else 'off'}")
    config = ns3_config(work, trace, out, macs, dcqcn=dcqcn, bottleneck_bps=bottleneck_bps,
                        sender_bps=sender_bps, red=red)
    try:
        with Namespace("ns3") as ns, Ns3Router(
                ns, args.ns3_router, macs, work, rate=f"{bottleneck_bps // 1_000_000}Mbps",
                delay="50us", min_th=red["min_th"], max_th=red["max_th"],
                max_size=f"{red['max_size']}p", qw=red["qw"],
                l_interm=red["l_interm"]) as router:
            start = time.monotonic()
            run = etwire(args, "run", config, "--predict", "--no-metrics", ns=ns, check=False)
            wall = time.monotonic() - start
            host = router.counters()
            red_stats = router.stop()
    except DeviceUnavailable as e:
        raise Skip(f"ns-3 router: {e}")
    assert run.returncode in (0, 1), f"etwire run exited {run.returncode}:\n{run.stderr}"
    measured, predicted = load_summary(out), load_summary(os.path.join(out, "prediction"))
    compare = etwire(args, "compare", os.path.join(out, "prediction"), out, check=False)
    assert compare.returncode in (0, 1), compare.stderr
    return {"out": out, "run": run, "measured": measured, "predicted": predicted,
            "red": red_stats, "host": host, "wall_s": wall, "qps": qp_sums(out),
            "predicted_qps": qp_sums(os.path.join(out, "prediction")),
            "compare": compare.stdout}


def run_figures(r, bytes_sent):
    measured, predicted = r["measured"], r["predicted"]
    rx, tx = measured["ports"]
    prx, ptx = predicted["ports"]
    cct = measured["collectives"][0]["cct_ns"]
    pcct = predicted["collectives"][0]["cct_ns"]
    return {
        "status": measured["status"], "failed_flows": measured["failed_flows"],
        "cct_ms": cct / 1e6, "goodput_mbps": bytes_sent * 8 / cct * 1e3,
        "ecn_marked_received": rx["ecn_marked_received"], "cnps_sent": rx["cnps_sent"],
        "cnps_received": tx["cnps_received"], "rate_cuts": r["qps"].get("rate_cuts", 0),
        "sent": tx["tx_packets"], "retransmitted": tx["retransmitted_packets"],
        "received": rx["rx_packets"], "host_received": r["host"]["host_received_0"],
        "ns3_marked": r["red"]["ba"]["marked"], "ns3_dropped": r["red"]["ba"]["dropped"],
        "ns3_queue_full_drops": r["red"]["ba"]["queue_full_drops"],
        "ns3_received": r["red"]["ba"]["received"], "ns3_sent": r["red"]["ba"]["sent"],
        "prediction_status": predicted["status"],
        "prediction_cct_ms": pcct / 1e6, "prediction_goodput_mbps": bytes_sent * 8 / pcct * 1e3,
        "prediction_ecn_marked_received": prx["ecn_marked_received"],
        "prediction_cnps_sent": prx["cnps_sent"],
        "prediction_rate_cuts": r["predicted_qps"].get("rate_cuts", 0),
        "prediction_retransmitted": ptx["retransmitted_packets"],
    }


def case_ns3_red_ecn(args, work):
    bytes_sent = 4 * 1024 * 1024
    trace = os.path.join(work, "gather")
    etwire(args, "synth", "microbench", "-c", "gather", "-b", "4MiB", "-n", "2", "-i", "1",
           "-o", trace)
    macs = ["02:00:00:00:00:10", "02:00:00:00:00:11"]
    # RED on the instantaneous queue (qw 1), as the twin marks: thresholds 10 and 30 packets,
    # max_p 0.1 at MaxTh, every packet marked above it, a 100-packet queue.
    red = {"min_th": 10, "max_th": 30, "max_size": 100, "qw": args.ns3_qw, "l_interm": 10}
    rates = {"bottleneck_bps": 30_000_000, "sender_bps": 60_000_000}
    on = ns3_run(args, work, trace, macs, dcqcn=True, red=red, **rates)
    off = ns3_run(args, work, trace, macs, dcqcn=False, red=red, **rates)
    f_on, f_off = run_figures(on, bytes_sent), run_figures(off, bytes_sent)
    if args.record:
        with open(args.record, "a") as f:
            for label, fig in (("dcqcn_on", f_on), ("dcqcn_off", f_off)):
                f.write(json.dumps({"device": "ns3_red", "run": label, "qw": red["qw"], **fig})
                        + "\n")
    print(f"  dcqcn on: {json.dumps(f_on)}\n  dcqcn off: {json.dumps(f_off)}")

    # DCQCN on: the flow completes through the router, its frames were CE-marked by RED, the
    # receiver counted them and answered with CNPs that reached the sender, which cut its rate.
    assert f_on["status"] == "completed" and f_on["failed_flows"] == 0, f_on
    assert f_on["ns3_marked"] > 0, on["red"]
    assert f_on["ecn_marked_received"] > 0, f_on
    # Every CE mark etwire counted was made by ns-3 (etwire sends ECT(0) only).
    assert f_on["ecn_marked_received"] <= f_on["ns3_marked"], f_on
    assert f_on["cnps_sent"] > 0 and f_on["cnps_received"] > 0, f_on
    assert f_on["cnps_received"] <= f_on["cnps_sent"], f_on
    assert f_on["rate_cuts"] > 0, f_on
    for fig in (f_on, f_off):
        # The router's queue toward the receiver saw every frame the sender put on the wire, and
        # nothing else; what it forwarded reached the receiver's veth end, all of it, and
        # etwire's port took at most that (its socket ring may overflow: docs/dut-validation.md).
        assert fig["ns3_received"] == fig["sent"], fig
        assert fig["host_received"] == fig["ns3_sent"], fig
        assert fig["received"] <= fig["host_received"], fig

    # DCQCN off on the same device: no rate cuts, and the sender at 60 Mb/s into 30 Mb/s fills
    # RED's queue: marks are counted but nothing reacts, so the queue overflows (drops) and the
    # sender goes back N.
    assert f_off["rate_cuts"] == 0 and f_off["cnps_received"] == 0, f_off
    assert f_off["ecn_marked_received"] <= f_off["ns3_marked"], f_off
    assert f_off["ns3_dropped"] > 0 and f_off["retransmitted"] > 0, f_off
    return (f"DCQCN on: ns-3 marked {f_on['ns3_marked']} (etwire received "
            f"{f_on['ecn_marked_received']} CE), {f_on['cnps_sent']} CNPs, "
            f"{int(f_on['rate_cuts'])} "
            f"rate cuts, {f_on['ns3_dropped']} dropped, {f_on['goodput_mbps']:.1f} Mb/s "
            f"(prediction {f_on['prediction_goodput_mbps']:.1f}); DCQCN off: ns-3 dropped "
            f"{f_off['ns3_dropped']}, {f_off['retransmitted']} retransmitted, "
            f"{f_off['status']} ({f_off['failed_flows']} flows failed; prediction "
            f"{f_off['prediction_status']})")


DEVICE_CASES = {"tbf_incast": case_tbf_incast, "ns3_red_ecn": case_ns3_red_ecn}


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
