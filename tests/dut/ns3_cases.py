"""An ns-3 router with a RED queue marking ECN as the device under test (docs/dut-validation.md)."""

import csv
import json
import math
import os
import time

from dut_runs import (Skip, af_packet_port, append_records, as_sent_figures, check_as_sent, etwire,
                      load_summary, twin_buffer)
from frame_checks import tshark_fields
from netns import DeviceUnavailable, Namespace
from ns3_router import Ns3Router

# What a RoCEv2 data frame of the case's path MTU is on the wire: 1024 payload bytes, Ethernet,
# IPv4, UDP, BTH, ICRC (RETH on a message's first packet is left out). ns-3's RED counts IP
# packets, the twin bytes: its thresholds are the packet thresholds times this.
NS3_FRAME_BYTES = 1024 + 14 + 20 + 8 + 12 + 4


def ns3_config(work, trace, out, macs, *, dcqcn, bottleneck_bps, sender_bps, red):
    """Two net_af_packet ports on either side of the ns-3 router: "rx" (side a, rank 0, the
    gather's root) and "tx" (side b, rank 1). Each addresses its frames to the router's MAC on
    its side. The twin gets the same bottleneck: rx's port at the bottleneck rate (the twin's
    switch port toward it is the queue), ECN thresholds and buffer of RED's, marking at enqueue
    on RED's average with its weight and RED's "wait" spacing of marks (ns-3's default), as the
    router does; its senders as noisy as etwire's on net_af_packet (fabric.sender_jitter).
    Without DCQCN, each go-back-N that makes some progress resets the retry count:
    how long the flows last before they fail has a long tail (1.8 to 12.9 s seen under the
    sanitizers, no flow ending meanwhile), hence the longer watchdog."""
    ports = ""
    for i, (name, speed) in enumerate((("rx", bottleneck_bps), ("tx", sender_bps))):
        ports += af_packet_port(name, i, macs[i], f"{speed // 1_000_000}Mbps",
                                ipv4=Ns3Router.HOST_IPS[i], next_hop_mac=Ns3Router.ROUTER_MACS[i])
    # The router's queue is counted in packets: RED's MaxSize in its disc and one more in the
    # device's queue (the frame on the wire is in neither), so the twin's queue holds as many
    # packets, with bytes to spare for a few more.
    queue_packets = red["max_size"] + 1
    buffer = twin_buffer((queue_packets + 3) * NS3_FRAME_BYTES, ports=2, reserve=2048)
    config = os.path.join(work, f"ns3-dcqcn-{'on' if dcqcn else 'off'}.yaml")
    # With DCQCN on nothing should fail: a lost tail is resent after 125 ms, doubling to 2 s, and
    # a QP fails only after 14 s without progress. A shared machine holds the poller (and the
    # router) off their CPUs for long stretches; 67 ms x 7 failed flows under two spinners.
    stall = ("  retransmit_timeout: 2s\n  adaptive_first_timeout: 125ms\n" if dcqcn else "")
    with open(config, "w") as f:
        f.write(f"""run:
  name: dut-ns3-red-ecn
  watchdog: {"20s" if dcqcn else "90s"}
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
{stall}  # NVIDIA's timers are for 100 Gb/s, where a 1 KB frame takes 80 ns; here it takes 280 us at
  # the bottleneck. Scaled so that CNPs, cuts and increases come every few frames, not faster.
  dcqcn: {{enabled: {str(dcqcn).lower()}, min_time_between_cnps: 2ms, rate_reduce_period: 2ms,
          alpha_update_period: 2ms, rate_increase_period: 20ms, additive_increase: 1Mbps,
          hyper_increase: 5Mbps, min_rate: 5Mbps, clamp_target_rate: true}}
fabric:
  topology: single-switch
  propagation_delay: 25us
  # etwire's own sender on net_af_packet, measured from its capture against exact pacing, is late
  # by 0.1 ms at the median, 0.5 ms at p90, 3.9 ms at p99 (docs/dut-validation.md): the twin's
  # sender gets up to 0.5 ms.
  sender_jitter: 500us
  buffer: {{size: {buffer['size']}, mode: {buffer['mode']}, ingress_reserve: {buffer['ingress_reserve']},
           queue_packets: {queue_packets}}}
  ecn: {{enabled: true, kmin: {red['min_th'] * NS3_FRAME_BYTES}, kmax: {red['max_th'] * NS3_FRAME_BYTES}, pmax: {1 / red['l_interm']}, mark_at: enqueue,
        average_weight: {red['qw']}, spacing: wait}}
telemetry:
  output_dir: {out}
  record: {{pcap: true}}
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


def ns3_run(args, work, trace, macs, *, dcqcn, red, bottleneck_bps, sender_bps, seed=1):
    """One lab run through a router of its own, with the twin's prediction at `seed` (the
    twin's sender jitter draws from it; the lab's run does not depend on it)."""
    out = os.path.join(work, f"out-dcqcn-{'on' if dcqcn else 'off'}-{seed}")
    config = ns3_config(work, trace, out, macs, dcqcn=dcqcn, bottleneck_bps=bottleneck_bps,
                        sender_bps=sender_bps, red=red)
    try:
        with Namespace("ns3") as ns, Ns3Router(
                ns, args.ns3_router, macs, work, rate=f"{bottleneck_bps // 1_000_000}Mbps",
                delay="50us", min_th=red["min_th"], max_th=red["max_th"],
                max_size=f"{red['max_size']}p", qw=red["qw"],
                l_interm=red["l_interm"]) as router:
            start = time.monotonic()
            run = etwire(args, "run", config, "--predict", "--no-metrics", "--set",
                         f"run.seed={seed}", ns=ns, check=False, measure_cpu=True)
            wall = time.monotonic() - start
            host = router.counters()
            red_stats = router.stop()
    except DeviceUnavailable as e:
        raise Skip(f"ns-3 router: {e}")
    assert run.returncode in (0, 1), f"etwire run exited {run.returncode}:\n{run.stderr}"
    measured, predicted = load_summary(out), load_summary(os.path.join(out, "prediction"))
    compare = etwire(args, "compare", os.path.join(out, "prediction"), out, check=False)
    assert compare.returncode == 0, compare.stderr
    # The as-sent prediction: the frames the lab's ports sent (their captures) through the twin.
    replay = etwire(args, "replay", config, out, check=False)
    assert replay.returncode == 0, replay.stderr
    with open(os.path.join(out, "as-sent", "as-sent.json")) as f:
        as_sent = json.load(f)
    return {"out": out, "config": config, "run": run, "measured": measured,
            "predicted": predicted, "as_sent": as_sent,
            "red": red_stats, "host": host, "wall_s": wall, "qps": qp_sums(out),
            "predicted_qps": qp_sums(os.path.join(out, "prediction")),
            "compare": compare.stdout, "cpu_wait": run.cpu_wait}


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
        "etwire_cpu_s": r["cpu_wait"].on_cpu_s, "etwire_cpu_wait_s": r["cpu_wait"].waiting_s,
        **as_sent_figures(r["as_sent"]),
    }


def calibrated_figures(args, work, runs, config_of):
    """etwire calibrate on the DCQCN-on runs (`runs[:-1]`, their rx port), then every run replayed
    as sent with the profile: the last, DCQCN off, is held out of the fit. Figures prefixed
    "calibrated"."""
    profile = os.path.join(work, "device-profile.yaml")
    fit = etwire(args, "calibrate", config_of(runs[0]), *[r["out"] for r in runs[:-1]],
                 "--port", "rx", "--out", profile, check=False)
    assert fit.returncode == 0, fit.stderr
    print(fit.stdout)
    figures = []
    for r in runs:
        out = os.path.join(r["out"], "as-sent-calibrated")
        replay = etwire(args, "replay", config_of(r), r["out"], "--profile", profile, "--out", out,
                        check=False)
        assert replay.returncode == 0, replay.stderr
        with open(os.path.join(out, "as-sent.json")) as f:
            figures.append(as_sent_figures(json.load(f), "calibrated"))
    return figures


# With DCQCN on and RED on the instantaneous queue, the lab's gather time may differ from the
# twin's prediction by this share either way, when etwire had its CPUs; the slower side is
# stretched by the time it waited for them (cpu_wait.py). Judged by `etwire compare` over
# NS3_ON_RUNS runs a side: a tolerance fails only when the 95 % interval of the delta between the
# means lies wholly beyond it (docs/compare.md, "Repeated runs").
NS3_CCT_SHARE = 0.10
NS3_MARKS_PERCENT = 20  # CE marks received and CNPs sent
NS3_ON_RUNS = 3
# One run alone, the lab's gather is not more than this much faster than the prediction.
NS3_CCT_FLOOR_SHARE = 0.25


def check_dcqcn_on(on, f_on):
    """DCQCN on: the flow completes through the router, its frames were CE-marked by RED, the
    receiver counted them and answered with CNPs that reached the sender, which cut its rate.
    The receiving port's capture (the measurement's: the prediction captures nothing) holds
    the CE marks coming in and the CNPs going out, each as many as the counters say."""
    assert f_on["status"] == "completed" and f_on["failed_flows"] == 0, f_on
    assert f_on["ns3_marked"] > 0, on["red"]
    assert f_on["ecn_marked_received"] > 0, f_on
    # Every CE mark etwire counted was made by ns-3 (etwire sends ECT(0) only).
    assert f_on["ecn_marked_received"] <= f_on["ns3_marked"], f_on
    assert f_on["cnps_sent"] > 0 and f_on["cnps_received"] > 0, f_on
    assert f_on["cnps_received"] <= f_on["cnps_sent"], f_on
    assert f_on["rate_cuts"] > 0, f_on
    capture = os.path.join(on["out"], "capture", "rx.pcapng")
    rx_ip = Ns3Router.HOST_IPS[0]
    ce_in = tshark_fields(capture, ["frame.number"],
                          f"ip.dst == {rx_ip} && ip.dsfield.ecn == 3 && infiniband")
    cnps_out = tshark_fields(capture, ["frame.number"],
                             f"ip.src == {rx_ip} && infiniband.bth.opcode == 0x81")
    assert len(ce_in) == f_on["ecn_marked_received"], (len(ce_in), f_on)
    assert len(cnps_out) == f_on["cnps_sent"], (len(cnps_out), f_on)


# Operating points of the router (--ns3-point), each with the sender at 60 Mb/s. "case" is the
# case CI runs and gates; "lossy" is a shallower RED on a slower link whose queue overflows with
# DCQCN on as well (the point the twin's ideal sender once missed by 41-74 % on marks).
NS3_POINTS = {
    "case": {"red": {"min_th": 10, "max_th": 30, "max_size": 100, "l_interm": 10},
             "bottleneck_bps": 30_000_000},
    "lossy": {"red": {"min_th": 5, "max_th": 20, "max_size": 80, "l_interm": 20},
              "bottleneck_bps": 20_000_000},
}


def case_ns3_red_ecn(args, work):
    bytes_sent = 4 * 1024 * 1024
    trace = os.path.join(work, "gather")
    etwire(args, "synth", "microbench", "-c", "gather", "-b", "4MiB", "-n", "2", "-i", "1",
           "-o", trace)
    macs = ["02:00:00:00:00:10", "02:00:00:00:00:11"]
    # The case: RED on the instantaneous queue (qw 1), as the twin marks: thresholds 10 and 30
    # packets, max_p 0.1 at MaxTh, every packet marked above it, a 100-packet queue.
    point = NS3_POINTS[args.ns3_point]
    red = {**point["red"], "qw": args.ns3_qw}
    rates = {"bottleneck_bps": point["bottleneck_bps"], "sender_bps": 60_000_000}
    ons = [ns3_run(args, work, trace, macs, dcqcn=True, red=red, seed=seed, **rates)
           for seed in range(1, NS3_ON_RUNS + 1)]
    off = ns3_run(args, work, trace, macs, dcqcn=False, red=red, **rates)
    f_ons = [run_figures(on, bytes_sent) for on in ons]
    f_off = run_figures(off, bytes_sent)
    calibrated = calibrated_figures(args, work, [*ons, off], lambda r: r["config"])
    for fig, more in zip([*f_ons, f_off], calibrated):
        fig.update(more)
    append_records(args, [{"device": "ns3_red", "run": label, "qw": red["qw"],
                           "point": args.ns3_point, **fig}
                          for label, fig in [("dcqcn_on", f) for f in f_ons] +
                          [("dcqcn_off", f_off)]])
    for f_on in f_ons:
        print(f"  dcqcn on: {json.dumps(f_on)}")
    print(f"  dcqcn off: {json.dumps(f_off)}")

    for on, f_on in zip(ons, f_ons):
        check_dcqcn_on(on, f_on)
    # The stated tolerances, where the build is not the sanitizers' and RED decides on the
    # instantaneous queue (the case the twin was measured against: docs/dut-validation.md):
    # over the runs, the lab's mean gather time within 10 % of the predictions' either way when
    # etwire had its CPUs, stretched by the largest share of its time a run waited for one, and
    # the CE marks and CNPs within 20 %.
    allowed = max(on["cpu_wait"].stretched(1 + NS3_CCT_SHARE) for on in ons)
    if red["qw"] == 1 and args.ns3_point == "case" and not os.environ.get("ETWIRE_SANITIZED"):
        predictions = ",".join(os.path.join(on["out"], "prediction") for on in ons)
        gate = etwire(args, "compare", predictions, ",".join(on["out"] for on in ons),
                      "--tolerance", f"cct={math.ceil((allowed - 1) * 100)}",
                      "--tolerance", f"ecn_marked_received={NS3_MARKS_PERCENT}",
                      "--tolerance", f"cnps_sent={NS3_MARKS_PERCENT}", check=False)
        print(gate.stdout)
        assert gate.returncode == 0, f"beyond the tolerance:\n{gate.stdout}{gate.stderr}"
        for f_on in f_ons:
            assert f_on["cct_ms"] >= (1 - NS3_CCT_FLOOR_SHARE) * f_on["prediction_cct_ms"], f_on
        for figs in (f_ons, f_off):
            check_as_sent(figs)
            check_as_sent(figs, "calibrated")
    f_on = f_ons[0]
    for fig in (*f_ons, f_off):
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
    return (f"etwire {ons[0]['cpu_wait']}, so within {allowed:.2f} times the predictions; "
            f"DCQCN on, first of {NS3_ON_RUNS}: ns-3 marked {f_on['ns3_marked']} (etwire received "
            f"{f_on['ecn_marked_received']} CE), {f_on['cnps_sent']} CNPs, "
            f"{int(f_on['rate_cuts'])} "
            f"rate cuts, {f_on['ns3_dropped']} dropped, {f_on['goodput_mbps']:.1f} Mb/s "
            f"(prediction {f_on['prediction_goodput_mbps']:.1f}); DCQCN off: ns-3 dropped "
            f"{f_off['ns3_dropped']}, {f_off['retransmitted']} retransmitted, "
            f"{f_off['status']} ({f_off['failed_flows']} flows failed; prediction "
            f"{f_off['prediction_status']})")


CASES = {"ns3_red_ecn": case_ns3_red_ecn}
