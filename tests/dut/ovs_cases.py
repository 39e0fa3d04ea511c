"""Open vSwitch with its DPDK datapath between two net_memif ports as the device under test
(docs/dut-validation.md)."""

import csv
import json
import os
import shutil
import sys
from collections import Counter

from dut_runs import Skip, append_records, as_sent_figures, check_as_sent, etwire, load_summary
from netns import DeviceUnavailable, Namespace
from ovs_dpdk import DeviceCrashed, OvsDpdk

# What etwire counts of a frame beyond the bytes OVS counts: preamble and SFD (8), inter-frame gap
# (12) and FCS (4). Measured: etwire's tx_bytes minus what OVS's flow matched is exactly 24 per
# frame.
WIRE_OVERHEAD = 24

# CPU 1 is OVS's: its PMD thread busy-polls it (other_config:pmd-cpu-mask) and the daemon's other
# threads are confined to it. etwire's main lcore and the worker of every port's queue 0 share CPU
# 0; the queue-1 workers (which receive everything OVS sends, see OVS_QUEUES) run on CPU 1 beside
# the PMD. At 4 Gb/s with a 100 ms retransmit timeout the mix failed flows on retries with this
# layout and (worse) with all three etwire lcores on CPU 0, a starved worker letting OVS overflow
# its memif ring; at 2 Gb/s with 500 ms both complete (docs/dut-validation.md, "Pinning").
OVS_PMD_CPUS = tuple(int(c) for c in os.environ.get("ETWIRE_DUT_OVS_PMD_CPUS", "1").split(","))
OVS_ETWIRE_LCORES = os.environ.get("ETWIRE_DUT_OVS_LCORES", "0@0,1@0,2@1")
# The PMD sleeps up to 1 ms between polls while its queues are idle. Busy-polling to the end, it
# crashed in about one case run in ten: when etwire exits, DPDK 22.11's memif server unmaps the
# client's rings while the PMD may be reading them (docs/dut-validation.md, "A crash at
# disconnect"). Idle by then, it is asleep, not mid-poll.
OVS_PMD_MAXSLEEP_US = int(os.environ.get("ETWIRE_DUT_OVS_PMD_MAXSLEEP_US", "1000"))
# OVS transmits on a memif port's tx queue 1 (its PMD's queue; 0 is the main thread's), so
# etwire's client needs two rx queues, and it may not have more tx queues than OVS's n_rxq (2).
# Everything arrives on etwire's queue 1; connections driven by queue 0 get their frames handed
# over between the two workers (queues[].handed_over in summary.json).
OVS_QUEUES = 2
OVS_SPEED = "2Gbps"


def memif_port(name, index, socket, lcores):
    return (f"  - name: {name}\n    backend: dpdk\n"
            f'    dpdk: {{vdev: "net_memif{index},role=client,id=0,socket={socket},rsize=14,'
            f'bsize=8192", queues: {OVS_QUEUES}, lcores: {lcores}}}\n'
            f"    speed: {OVS_SPEED}\n    mtu: 1500\n")


def ring_port(name, index, peer, lcores=None):
    queues = f", queues: {OVS_QUEUES}, lcores: {lcores}" if lcores else ""
    return (f"  - name: {name}\n    backend: dpdk\n"
            f"    dpdk: {{vdev: net_ring{index}, peer: {peer}{queues}}}\n"
            f"    speed: {OVS_SPEED}\n    mtu: 1500\n")


def ovs_config(path, name, jobs, ports, out, *, iterations, lcores, dcqcn, qps_per_peer=2,
               ecn=False, dcqcn_extra="", capture=False):
    """Each job's eight ranks four per port, as one host of four on each port, so every ring or
    all-to-all step between the hosts crosses the device."""
    job_yaml = "".join(f"    - name: {job}\n      trace: {trace}\n" for job, trace in jobs)
    mapping = "".join(f"""    - job: {job}
      placement: block
      ranks_per_port: 4
      hosts: {{ranks_per_host: 4, bandwidth: 100GBps}}
""" for job, _ in jobs)
    with open(path, "w") as f:
        f.write(f"""run:
  name: {name}
  watchdog: 30s
workload:
  iterations: {iterations}
  warmup_iterations: 0
  jobs:
{job_yaml}dpdk:
  eal_args: ["--no-pci", "--no-huge", "--no-shconf", "-m", "1024", "--lcores", "{lcores}"]
  mbufs: 16383
ports:
{ports}mapping:
  jobs:
{mapping}collectives:
  qps_per_peer: {qps_per_peer}
  algorithms:
    all_reduce: ring
transport:
  op: write-with-imm
  pmtu: 1024
  # A lost tail is resent after 125 ms, doubling to 2 s: a QP fails only after 14 s without
  # progress. A shared machine holds a poller off its CPU for tens of milliseconds at a time, and
  # OVS's memif ring toward a starved poller overflows for as long (the sanitizers' pollers drain
  # it slower still); with 500 ms x 7 a busy machine failed most of the mix's flows.
  retransmit_timeout: 2s
  adaptive_first_timeout: 125ms
  retry_count: 7
  dcqcn: {{enabled: {str(dcqcn).lower()}{dcqcn_extra}}}
fabric:
  topology: single-switch
  ecn: {{enabled: {str(ecn).lower()}}}
telemetry:
  output_dir: {out}
  record: {{pcap: {str(capture).lower()}}}
""")


def load_flows(out):
    with open(os.path.join(out, "flows.csv")) as f:
        return list(csv.DictReader(f))


def flow_bytes(flows):
    """How many flows moved each number of bytes per (src port, dst port, src rank, dst rank,
    chunk): two jobs number their ranks alike, and a collective's number in the run depends on
    which job's came first, so flows are matched by what they carried where."""
    return Counter((r["src_port"], r["dst_port"], r["src_rank"], r["dst_rank"], r["chunk"],
                    int(r["bytes"])) for r in flows)


def per_type(summary):
    """Mean CCT (ms) and busbw (GB/s) of each collective type over the measured iterations."""
    rows = {}
    for c in summary["collectives"]:
        if not c["warmup"]:
            rows.setdefault(c["type"], []).append(c)
    return {kind: {"count": len(cs), "cct_ms": sum(c["cct_ns"] for c in cs) / len(cs) / 1e6,
                   "busbw_GBps": sum(c["busbw_GBps"] for c in cs) / len(cs)}
            for kind, cs in rows.items()}


def check_through_ovs(measured, device):
    """What etwire's ports sent and received against what OVS's flows matched and its ports
    dropped: frames are lost only where OVS says it dropped them."""
    a, b = measured["ports"]
    flows = device["flows"]
    ports = device["ports"]
    into = {0: flows["priority=10,in_port=1 actions=output:2"],
            1: flows["priority=10,in_port=2 actions=output:1"]}
    for i, (sender, receiver) in enumerate(((a, b), (b, a))):
        out = 1 - i
        # Every frame etwire put on its memif ring reached OVS and matched the port's flow.
        assert into[i]["packets"] == sender["tx_packets"], (sender["name"], into[i], sender)
        assert sender["tx_bytes"] == into[i]["bytes"] + WIRE_OVERHEAD * sender["tx_packets"], \
            (sender["name"], into[i], sender["tx_bytes"])
        # What OVS forwarded reached the other etwire port, except what it counted as dropped
        # (the memif ring toward etwire full: ovs_tx_failure_drops).
        dropped = ports[out]["tx_dropped"]
        assert receiver["rx_packets"] + dropped == into[i]["packets"], \
            (receiver["name"], receiver["rx_packets"], dropped, into[i])
    return {f"ovs_dropped_toward_{p['name']}": ports[i]["tx_dropped"]
            for i, p in enumerate((a, b))}


def run_through_ovs(args, work, label, jobs, *, iterations, dcqcn, predict=True, flow_rules=(),
                    ecn=False, dcqcn_extra="", capture=False):
    """One run of `jobs` on two net_memif ports through OVS (explicit in_port -> output flows,
    plus flow_rules above them); returns the summary, flows, prediction and device counters.

    When ovs-vswitchd-dpdk crashes after a run that completed (DPDK 22.11's memif server can
    fault when a client leaves while its PMD polls: docs/dut-validation.md), the device's
    counters are gone with it: the run is repeated once on a new OVS, and the crash is printed.
    A crash before the run completed, or a second one, fails the case."""
    out = os.path.join(work, label)
    config = os.path.join(work, label + ".yaml")
    for attempt in (1, 2):
        try:
            run, device = run_once_through_ovs(args, config, out, label, jobs,
                                               iterations=iterations, dcqcn=dcqcn,
                                               predict=predict, flow_rules=flow_rules, ecn=ecn,
                                               dcqcn_extra=dcqcn_extra, capture=capture)
            break
        except DeviceCrashed as crash:
            summary = (load_summary(out) if os.path.exists(os.path.join(out, "summary.json"))
                       else {})
            finished = summary.get("status") == "completed" and summary.get("failed_flows") == 0
            if attempt == 2 or not finished:
                when = "again" if attempt == 2 else "before the run completed"
                raise AssertionError(f"{label}: Open vSwitch crashed {when}:\n{crash}") from None
            print(f"{label}: ovs-vswitchd-dpdk killed by signal {crash.signal} after the run "
                  f"completed; repeating the run on a new OVS", file=sys.stderr)
            shutil.rmtree(out)
    assert run.returncode in (0, 1), f"etwire run exited {run.returncode}:\n{run.stderr}"
    measured = load_summary(out)
    if args.keep:
        with open(os.path.join(work, label + "-ovs.json"), "w") as f:
            json.dump(device, f, indent=1)
    assert measured["status"] == "completed", (label, measured["status"],
                                               measured["failed_by_status"], run.stderr[-2000:])
    assert measured["failed_flows"] == 0, measured["failed_by_status"]
    predicted = load_summary(os.path.join(out, "prediction")) if predict else None
    return out, measured, load_flows(out), predicted, device


def run_once_through_ovs(args, config, out, label, jobs, *, iterations, dcqcn, predict,
                         flow_rules, ecn, dcqcn_extra, capture):
    """Starts OVS, runs etwire through it and reads the device's counters: (run, counters)."""
    try:
        with Namespace("ovs") as ns, OvsDpdk(ns, 2, pmd_cpus=OVS_PMD_CPUS, n_rxq=OVS_QUEUES,
                                             pmd_maxsleep_us=OVS_PMD_MAXSLEEP_US) as ovs:
            ovs.cross_connect()
            for rule in flow_rules:
                ovs.add_flow(rule)
            ports = (memif_port("a", 0, ovs.socket(0), "[1, 2]") +
                     memif_port("b", 1, ovs.socket(1), "[1, 2]"))
            ovs_config(config, f"dut-ovs-{label}", jobs, ports, out, iterations=iterations,
                       lcores=OVS_ETWIRE_LCORES, dcqcn=dcqcn, ecn=ecn,
                       dcqcn_extra=dcqcn_extra, capture=capture)
            cmd = ["run", config, "--no-metrics"] + (["--predict"] if predict else [])
            run = etwire(args, *cmd, ns=ns, check=False)
            try:
                return run, ovs.counters()
            except RuntimeError as e:
                message = f"{e}\netwire run exited {run.returncode}:\n{run.stderr[-3000:]}"
                if isinstance(e, DeviceCrashed):
                    raise DeviceCrashed(e.signal, message) from None
                raise AssertionError(message) from None
    except DeviceUnavailable as e:
        raise Skip(f"Open vSwitch (DPDK): {e}")


def run_back_to_back(args, work, label, jobs, *, iterations, dcqcn, same_lcores=False):
    """The same workload on two net_ring ports cabled to each other (dpdk.peer): no device. On
    the main lcore, or with same_lcores on the queues and lcores of the run through OVS (each
    frame stays on its queue's ring: nothing is handed over)."""
    config, out = back_to_back_config(work, label, jobs, iterations=iterations, dcqcn=dcqcn,
                                      same_lcores=same_lcores)
    etwire(args, "run", config, "--no-metrics")
    summary = load_summary(out)
    assert summary["status"] == "completed" and summary["failed_flows"] == 0, summary["status"]
    return summary, load_flows(out)


def allreduce_workloads(source_dir):
    """ovs_allreduce's workloads: (label, jobs [(name, trace)], iterations, DCQCN on)."""
    traces = os.path.join(source_dir, "configs", "traces")
    return [
        ("allreduce", [("allreduce", os.path.join(traces, "allreduce_8r", "allreduce"))], 2,
         False),
        # configs/mixed-allreduce-alltoall.yaml's two jobs (32 MiB ring all-reduces and 8 MiB
        # all-to-alls, DCQCN on), both on the same two ports.
        ("mixed", [("allreduce", os.path.join(traces, "allreduce_32m_8r", "allreduce")),
                   ("alltoall", os.path.join(traces, "alltoall_8r", "alltoall"))], 1, True),
    ]


def back_to_back_config(work, label, jobs, *, iterations, dcqcn, same_lcores=False):
    """The configuration of two net_ring ports cabled to each other (run_back_to_back) and where
    it puts its results: (config, out)."""
    suffix = "-ring-lcores" if same_lcores else "-ring"
    out = os.path.join(work, label + suffix)
    config = os.path.join(work, label + suffix + ".yaml")
    ports = (ring_port("a", 0, "b", "[1, 2]" if same_lcores else None) +
             ring_port("b", 1, "a", "[2, 1]" if same_lcores else None))
    ovs_config(config, f"dut-ring-{label}", jobs, ports, out, iterations=iterations,
               lcores=OVS_ETWIRE_LCORES if same_lcores else "0", dcqcn=dcqcn)
    return config, out


def ovs_as_sent(args, work, jobs, iterations):
    """The all-reduce through OVS once more, its ports captured, replayed as sent (etwire
    replay): the frames each port put on its memif ring enter the twin when they left, so what
    the sender's CPUs did is taken out, and what is left to predict is the device. Port b's last
    data frame arrives within 10 % of the lab's time and the frames lost are within 20 frames
    (Release builds). Returns the replay's figures at b."""
    label = "allreduce-captured"
    out, _, _, _, _ = run_through_ovs(args, work, label, jobs, iterations=iterations,
                                      dcqcn=False, predict=False, capture=True)
    replay = etwire(args, "replay", os.path.join(work, label + ".yaml"), out, check=False)
    assert replay.returncode == 0, replay.stderr[-3000:]
    with open(os.path.join(out, "as-sent", "as-sent.json")) as f:
        figures = as_sent_figures(json.load(f), port="b")
    if not os.environ.get("ETWIRE_SANITIZED"):
        check_as_sent(figures)
    return figures


def case_ovs_allreduce(args, work):
    workloads = allreduce_workloads(args.source_dir)
    details, records = [], []
    for label, jobs, iterations, dcqcn in workloads:
        out, measured, flows, predicted, device = run_through_ovs(
            args, work, label, jobs, iterations=iterations, dcqcn=dcqcn)
        ring, ring_flows = run_back_to_back(args, work, label, jobs, iterations=iterations,
                                            dcqcn=dcqcn)
        # The same flows, each moving the same bytes, as with no device between the ports.
        assert measured["flows"] == ring["flows"] > 0, (measured["flows"], ring["flows"])
        assert len(flows) == len(ring_flows)
        assert flow_bytes(flows) == flow_bytes(ring_flows), f"{label}: bytes per flow differ"
        assert all(row["status"] == "completed" for row in flows)
        dropped = check_through_ovs(measured, device)
        # Every frame beyond the trace's own has a cause the counters show: OVS dropped frames
        # (missing at the receiver) or a timer fired.
        resent = sum(p["retransmitted_packets"] for p in measured["ports"])
        causes = sum(p["missing_packets"] + p["timeouts"] for p in measured["ports"])
        assert resent == 0 or causes > 0, measured["ports"]
        compare = etwire(args, "compare", os.path.join(out, "prediction"), out, "--json",
                         os.path.join(work, label + "-compare.json"), check=False)
        assert compare.returncode == 0, compare.stderr
        # The machine's share: the same ports' queues on the same lcores, back to back.
        ring_lcores, _ = run_back_to_back(args, work, label, jobs, iterations=iterations,
                                          dcqcn=dcqcn, same_lcores=True)
        lab, twin, b2b = per_type(measured), per_type(predicted), per_type(ring)
        b2b_lcores = per_type(ring_lcores)
        record = {"device": "ovs-dpdk", "workload": label, "flows": measured["flows"],
                  "bytes": sum(int(r["bytes"]) for r in flows), "speed": OVS_SPEED,
                  "retransmitted": resent, **dropped,
                  "handed_over": sum(q["handed_over"] for p in measured["ports"]
                                     for q in p.get("queues", [])),
                  "prediction_status": predicted["status"],
                  "collectives": {k: {"lab": lab[k], "prediction": twin.get(k),
                                      "back_to_back": b2b.get(k),
                                      "back_to_back_same_lcores": b2b_lcores.get(k)}
                                  for k in lab}}
        records.append(record)
        details.append(f"{label}: {measured['flows']} flows as back to back, " + ", ".join(
            f"{k} CCT {v['cct_ms']:.1f} ms / busbw {v['busbw_GBps']:.3f} GB/s "
            f"(prediction {twin[k]['cct_ms']:.1f} ms / {twin[k]['busbw_GBps']:.3f}, back to back "
            f"{b2b[k]['cct_ms']:.1f} ms / {b2b[k]['busbw_GBps']:.3f}, on the same lcores "
            f"{b2b_lcores[k]['cct_ms']:.1f} ms)"
            for k, v in lab.items() if k in twin) +
            f", {resent} resent, OVS dropped {sum(dropped.values())}")
    as_sent = ovs_as_sent(args, work, *workloads[0][1:3])
    records.append({"device": "ovs-dpdk", "workload": "allreduce-as-sent", **as_sent})
    details.append(f"as sent: last data frame at b {as_sent['as_sent_twin_last_ms']:.1f} ms "
                   f"against the lab's {as_sent['as_sent_lab_last_ms']:.1f}, lost "
                   f"{as_sent['as_sent_twin_lost']} against {as_sent['as_sent_lab_lost']}")
    append_records(args, records)
    return "; ".join(details)


# Every ECT(0) RoCE frame from port a (OVS port 1) toward port b is marked CE: data only, since
# etwire sends ACKs and CNPs not-ECT (qos.ack/cnp.ecn), as a switch marks only ECN-capable packets.
ECN_MARK_RULE = ("priority=20,in_port=1,udp,nw_ecn=2,tp_dst=4791,"
                 "actions=mod_nw_ecn:3,output:2")


def load_qps(out):
    with open(os.path.join(out, "qps.csv")) as f:
        return list(csv.DictReader(f))


def case_ovs_ecn_mark(args, work):
    trace = os.path.join(work, "alltoall")
    etwire(args, "synth", "microbench", "-c", "all_to_all", "-b", "1MiB", "-n", "8", "-i", "2",
           "-o", trace)
    jobs = [("alltoall", trace)]
    details = []
    # min_time_between_cnps 0: the notification point answers every CE-marked data packet with a
    # CNP, so the count is exact. 4us (NVIDIA's default): at most one per QP per 4 us, and which
    # marked arrivals fall inside a QP's 4 us window depends on when the receiving worker polled,
    # which no output records per packet: only bounds are asserted. A DCQCN floor of 200 Mb/s
    # keeps the run short while every data packet toward b is marked.
    for label, min_time in (("every", "0ns"), ("paced", "4us")):
        out, measured, flows, _, device = run_through_ovs(
            args, work, f"ecn-{label}", jobs, iterations=1, dcqcn=True, predict=False,
            flow_rules=[ECN_MARK_RULE],
            dcqcn_extra=f", min_time_between_cnps: {min_time}, min_rate: 200Mbps")
        a, b = measured["ports"]
        # OVS shows mod_nw_ecn:3 as set_field:3->nw_ecn.
        mark = [v for k, v in device["flows"].items() if "->nw_ecn" in k]
        assert len(mark) == 1, device["flows"]
        marked = mark[0]["packets"]
        plain_a = device["flows"]["priority=10,in_port=1 actions=output:2"]["packets"]
        # The rule caught exactly a's data frames (first sends and resends); the plain flow the
        # rest (ACKs, NAKs and CNPs).
        assert marked == a["data_packets"] > 0, (marked, a)
        assert marked + plain_a == a["tx_packets"], (marked, plain_a, a["tx_packets"])
        # b counted every marked frame OVS delivered; OVS's drops toward b are the only loss.
        toward_b, toward_a = device["ports"][1]["tx_dropped"], device["ports"][0]["tx_dropped"]
        assert marked - toward_b <= b["ecn_marked_received"] <= marked, (b, marked, toward_b)
        if toward_b == 0:
            assert b["ecn_marked_received"] == marked, (b, marked)
        assert a["ecn_marked_received"] == 0 and a["cnps_sent"] == 0, a
        assert b["cnps_received"] == 0, b
        responders = [q for q in load_qps(out) if q["role"] == "responder" and q["port"] == "b"]
        with_marks = [q for q in responders if int(q["ecn_marked_received"]) > 0]
        assert sum(int(q["ecn_marked_received"]) for q in responders) == b["ecn_marked_received"]
        assert sum(int(q["cnps_sent"]) for q in responders) == b["cnps_sent"]
        if min_time == "0ns":
            # One CNP per marked data packet, per QP and on the port.
            for q in responders:
                assert int(q["cnps_sent"]) == int(q["ecn_marked_received"]), q
            assert b["cnps_sent"] == b["ecn_marked_received"], b
        else:
            # Each QP that received a mark sent at least its first CNP and at most one per mark.
            for q in with_marks:
                assert 1 <= int(q["cnps_sent"]) <= int(q["ecn_marked_received"]), q
            assert len(with_marks) <= b["cnps_sent"] <= b["ecn_marked_received"], b
        # The CNPs reached a (less what OVS dropped toward it), and a's requesters cut rates.
        assert b["cnps_sent"] - toward_a <= a["cnps_received"] <= b["cnps_sent"], (a, b, toward_a)
        requesters = [q for q in load_qps(out) if q["role"] == "requester"]
        queue_rate = 2e9 / OVS_QUEUES
        for q in requesters:
            if q["port"] == "a" and int(q["cnps_received"]) > 0:
                assert int(q["rate_cuts"]) > 0, q
                assert float(q["min_rate_bps"]) < queue_rate, q
            if q["port"] == "b":
                assert int(q["cnps_received"]) == 0 and int(q["rate_cuts"]) == 0, q
        cut = [q for q in requesters if q["port"] == "a" and int(q["rate_cuts"]) > 0]
        assert cut, "no requester on a cut its rate"
        record = {"device": "ovs-dpdk", "case": "ecn_mark", "min_time_between_cnps": min_time,
                  "marked_by_ovs": marked, "ecn_marked_received": b["ecn_marked_received"],
                  "cnps_sent": b["cnps_sent"], "cnps_received": a["cnps_received"],
                  "qps_marked": len(with_marks), "requesters_cut": len(cut),
                  "rate_cuts": sum(int(q["rate_cuts"]) for q in cut),
                  "min_rate_mbps": min(float(q["min_rate_bps"]) for q in cut) / 1e6,
                  "ovs_dropped_toward_b": toward_b, "ovs_dropped_toward_a": toward_a,
                  "flows": measured["flows"]}
        append_records(args, [record])
        details.append(f"min_time_between_cnps {min_time}: OVS marked {marked}, b received "
                       f"{b['ecn_marked_received']} CE, sent {b['cnps_sent']} CNPs over "
                       f"{len(with_marks)} QPs, a got {a['cnps_received']}, {len(cut)} requesters "
                       f"cut ({record['rate_cuts']} cuts, down to "
                       f"{record['min_rate_mbps']:.0f} Mb/s)")
    return "; ".join(details)


CASES = {"ovs_allreduce": case_ovs_allreduce, "ovs_ecn_mark": case_ovs_ecn_mark}
