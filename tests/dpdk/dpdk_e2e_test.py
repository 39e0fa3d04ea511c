#!/usr/bin/env python3
"""End-to-end tests of etwire's DPDK backend on virtual devices (no NIC needed).

    python3 tests/dpdk/dpdk_e2e_test.py --etwire build/release/etwire --source-dir . \
        --case NAME [--keep]

Cases:

  ring        The upstream 8-rank all-reduce (astra-sim microbench, 1 MiB) with four ranks per
              port on two net_ring ports wired back to back completes, and moves the same flows
              (count, and bytes per (src rank, dst rank, chunk)) as the same mapping on the
              loopback NIC and fabric twin. Both ports' frame counters agree: what one sends the
              other receives, with no drops, and no frame is malformed.
  pcap        A run on a net_pcap port (tx_pcap only: nothing comes back, so the run stops at
              its watchdog before any retransmission) writes RoCEv2 frames to a file. tshark
              decodes every frame as InfiniBand over UDP 4791; each QP's PSNs count up from 0
              without a gap, its messages are WRITE FIRST/MIDDLE.../LAST-with-immediate (or ONLY),
              RETH on the first packet of each message, and every QP number is one of the run's.
              scapy's RoCE layer recomputes every frame's ICRC and it must match.
  ring_workers  The same with port b driven by worker lcore 1 (dpdk.lcore) and port a by the
              main lcore, so every connection spans two cores; and a port naming an lcore the
              EAL does not have is refused with its name.
  ring_queues The same with two QPs per rank pair, on ports of two queue pairs each (dpdk.queues;
              a's queues on lcores 1 and 2, b's on 2 and 1, so each worker drives one queue of
              each port and every connection's two ends are on different workers, with the
              other end's port local to both): the connections are spread over both
              queues (summary.json lists each queue, and each sent and received frames), each
              queue's frames arrive on the same queue of the other port (one ring per queue), so
              none is handed over to another queue, and the queues add up to the port.
  af_packet   Two net_af_packet ports on the two ends of a veth pair, in a network namespace the
              test creates (and removes), run an all-reduce across the kernel to completion.
  af_packet_queues  The same on two queue pairs on one port and three on the other (qpairs,
              four QPs per rank pair):
              the kernel hashes arrivals over the queues regardless of which queue drives a
              connection, so frames are handed over between the queues' workers, and the run
              still completes with every flow.

A case that needs the upstream traces is skipped (exit 77) when ../shared is absent. When DPDK's
EAL cannot start at all on this machine the cases skip (exit 77) with its message; anything
else that goes wrong is a failure.
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
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from dpdk_runs import Skip, run_dpdk_etwire  # noqa: E402
from frame_checks import scapy_icrc_check, tshark_fields  # noqa: E402

SKIP = 77
UPSTREAM = "../shared/traces/upstream/astra-sim/microbench_all_reduce_8npus_1MB/all_reduce"


def eal_args(extra=(), lcores="0"):
    # Own memory, no shared config: parallel tests never meet. An lcore list with "@" maps
    # lcores to CPUs (more lcores than the machine has CPUs).
    cores = ["--lcores", lcores] if "@" in lcores else ["-l", lcores]
    return ["--no-pci", "--no-huge", "--no-shconf", "-m", "512", *cores, *extra]


def yaml_list(items):
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def config_text(name, trace, ports_yaml, out, *, dpdk=True, pmtu=4096, iterations=2,
                hosts_of_four=True, watchdog="5s", extra="", lcores="0", qps_per_peer=1):
    """Four ranks per port; with hosts_of_four each port is one host, else all eight ranks share
    one port as hosts of one rank each. `lcores` is the EAL's -l."""
    dpdk_section = (f"dpdk:\n  eal_args: {yaml_list(eal_args(lcores=lcores))}\n  mbufs: 4095\n"
                    if dpdk else "")
    mapping = ("ranks_per_port: 4\n      hosts: {ranks_per_host: 4, bandwidth: 100GBps}"
               if hosts_of_four else "ranks_per_port: 8")
    return f"""run:
  name: {name}
  watchdog: {watchdog}
workload:
  iterations: {iterations}
  warmup_iterations: 0
  jobs:
    - name: allreduce
      trace: {trace}
{dpdk_section}ports:
{ports_yaml}
mapping:
  jobs:
    - job: allreduce
      placement: block
      {mapping}
collectives:
  qps_per_peer: {qps_per_peer}
  algorithms:
    all_reduce: ring
transport:
  op: write-with-imm
  pmtu: {pmtu}
{extra}telemetry:
  output_dir: {out}
"""


def run_etwire(args, config_path, *, timeout=180, check=True, prefix=()):
    return run_dpdk_etwire(args.etwire, ["run", config_path, "--no-metrics"], prefix=prefix,
                           timeout=timeout, check=check)


def load_results(out):
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "flows.csv")) as f:
        flows = list(csv.DictReader(f))
    return summary, flows


def flow_bytes(flows):
    per = Counter()
    for row in flows:
        per[(row["src_rank"], row["dst_rank"], row["chunk"])] += int(row["bytes"])
    return per


def ring_ports(lcore_b=None):
    b_lcore = f", lcore: {lcore_b}" if lcore_b is not None else ""
    return f"""  - name: a
    backend: dpdk
    dpdk: {{vdev: net_ring0, peer: b}}
    speed: 25Gbps
    mtu: 4200
  - name: b
    backend: dpdk
    dpdk: {{vdev: net_ring1, peer: a{b_lcore}}}
    speed: 25Gbps
    mtu: 4200"""


def case_ring(args, work):
    return ring_against_loopback(args, work, ring_ports(), lcores="0")


def case_ring_workers(args, work):
    # Port b on worker lcore 1 with its own transport, port a with the engine on the main lcore:
    # every connection crosses from one worker to the other, so deliveries and completions come
    # from different cores and are joined on the main lcore.
    detail = ring_against_loopback(args, work, ring_ports(lcore_b=1), lcores="0-1")
    # An lcore the EAL was not given is refused by name before anything runs.
    trace = os.path.normpath(os.path.join(args.source_dir, UPSTREAM))
    path = os.path.join(work, "bad-lcore.yaml")
    with open(path, "w") as f:
        f.write(config_text("bad-lcore", trace, ring_ports(lcore_b=5),
                            os.path.join(work, "bad"), lcores="0-1"))
    proc = run_etwire(args, path, check=False)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert 'port "b"' in proc.stderr and "lcore 5 is not a worker lcore" in proc.stderr, \
        proc.stderr
    return detail + "; port b on worker lcore 1"


def ring_queue_ports():
    return """  - name: a
    backend: dpdk
    dpdk: {vdev: net_ring0, peer: b, queues: 2, lcores: [1, 2]}
    speed: 25Gbps
    mtu: 4200
  - name: b
    backend: dpdk
    dpdk: {vdev: net_ring1, peer: a, queues: 2, lcores: [2, 1]}
    speed: 25Gbps
    mtu: 4200"""


def case_ring_queues(args, work):
    # Three busy lcores on this machine's two CPUs: lcore 2 shares CPU 0 with the main lcore.
    # Queue q of a and queue q of b are on different lcores: each worker drives a queue of both
    # ports, and answers for connections whose requester the other worker drives.
    detail = ring_against_loopback(args, work, ring_queue_ports(), lcores="0@0,1@1,2@0",
                                   qps_per_peer=2)
    with open(os.path.join(work, "ring", "summary.json")) as f:
        ports = json.load(f)["ports"]
    for port, lcores in zip(ports, ([1, 2], [2, 1])):
        queues = port.get("queues")
        assert queues is not None and [q["queue"] for q in queues] == [0, 1], port
        assert [q["lcore"] for q in queues] == lcores, queues
        for q in queues:
            # Both queues carried connections, and the rings delivered every frame to the
            # queue that drives its connection.
            assert q["tx_packets"] > 0 and q["rx_packets"] > 0, (port["name"], q)
            assert q["handed_over"] == 0, (port["name"], q)
        for key in ("tx_packets", "rx_packets", "tx_bytes", "rx_bytes"):
            assert sum(q[key] for q in queues) == port[key], (port["name"], key)
    a, b = ports
    for sender, receiver in ((a, b), (b, a)):
        for qs, qr in zip(sender["queues"], receiver["queues"]):
            assert qs["tx_packets"] == qr["rx_packets"], (qs, qr)
    return detail + "; two queues per port, crossed over lcores 1 and 2, none handed over"


def ring_against_loopback(args, work, ring_ports_yaml, *, lcores, qps_per_peer=1):
    trace = os.path.normpath(os.path.join(args.source_dir, UPSTREAM))
    if not os.path.exists(trace + ".0.et"):
        raise Skip(f"upstream traces not found at {trace}.*.et (../shared absent)")
    ring_ports = ring_ports_yaml
    loop_ports = """  - name: a
    speed: 25Gbps
    mtu: 4200
  - name: b
    speed: 25Gbps
    mtu: 4200"""
    runs = {}
    for kind, ports, dpdk in (("ring", ring_ports, True), ("loopback", loop_ports, False)):
        out = os.path.join(work, kind)
        path = os.path.join(work, kind + ".yaml")
        with open(path, "w") as f:
            f.write(config_text(kind, trace, ports, out, dpdk=dpdk, lcores=lcores,
                                qps_per_peer=qps_per_peer))
        run_etwire(args, path)
        runs[kind] = load_results(out)
    ring_summary, ring_flows = runs["ring"]
    loop_summary, loop_flows = runs["loopback"]
    assert ring_summary["status"] == "completed", ring_summary["status"]
    assert ring_summary["run"]["topology"] == "device-under-test"
    assert ring_summary["flows"] > 0
    assert ring_summary["flows"] == loop_summary["flows"], (ring_summary["flows"],
                                                           loop_summary["flows"])
    assert ring_summary["failed_flows"] == 0
    assert len(ring_flows) == len(loop_flows)
    assert flow_bytes(ring_flows) == flow_bytes(loop_flows), "bytes per rank pair differ"
    assert all(row["status"] == "completed" for row in ring_flows)
    a, b = ring_summary["ports"]
    for sender, receiver in ((a, b), (b, a)):
        assert sender["tx_packets"] == receiver["rx_packets"], (sender, receiver)
        assert sender["tx_bytes"] == receiver["rx_bytes"], (sender, receiver)
        assert sender["drops"] == 0, sender
        assert receiver["missing_packets"] == 0, receiver
        # Nothing was lost, so a resend can only come from a retransmit timer that fired while
        # the worker polling the ACK was held off its CPU (a busy machine), never from a NAK.
        assert sender["retransmitted_packets"] == 0 or sender["timeouts"] > 0, sender
        if sender["retransmitted_packets"]:
            print(f"{sender['name']}: {sender['retransmitted_packets']} packets resent after "
                  f"{sender['timeouts']} timeouts, none lost (a worker held off its CPU)")
    # A ring all-reduce of S bytes over 8 ranks sends 2 x 7/8 x S per rank; with hosts of four
    # ranks only the two host-crossing ring links (3 to 4, 7 to 0) use the ports: per iteration
    # 2 x 1.75 MiB, over 2 iterations.
    total = sum(int(r["bytes"]) for r in ring_flows)
    assert total == 2 * 2 * (2 * 7 * (1 << 20) // 8), total
    return f"{ring_summary['flows']} flows, {total} bytes, as on loopback"


def case_pcap(args, work):
    pcap = os.path.join(work, "tx.pcap")
    ports = f"""  - name: tap
    backend: dpdk
    dpdk: {{vdev: "net_pcap0,tx_pcap={pcap}"}}
    speed: 10Gbps
    mtu: 1500"""
    out = os.path.join(work, "out")
    path = os.path.join(work, "pcap.yaml")
    trace = os.path.join(args.source_dir, "configs/traces/allreduce_8r/allreduce")
    # All eight ranks on the one port, one rank per host: every ring neighbour is reached
    # through the port. Nothing answers, so the run stops at its watchdog, long before the
    # first retransmission (fixed: adaptive retransmission's first timeout is 16.8 ms).
    with open(path, "w") as f:
        f.write(config_text("pcap", trace, ports, out, pmtu=1024, iterations=1,
                            hosts_of_four=False, watchdog="300ms",
                            extra="  retransmission: fixed\n  retransmit_timeout: 10s\n"))
    proc = run_etwire(args, path, check=False)
    assert proc.returncode != 0 and "no node and no flow completed" in proc.stderr, proc.stderr
    summary, _ = load_results(out)
    sent = summary["ports"][0]["tx_packets"]
    assert sent > 100, sent
    rows = tshark_fields(pcap, ["frame.number", "udp.dstport", "infiniband.bth.opcode",
                                "infiniband.bth.destqp", "infiniband.bth.psn",
                                "infiniband.reth.dmalen", "ip.dsfield.ecn"])
    assert len(rows) == sent, (len(rows), sent)
    first, middle, last_imm, only_imm = 6, 7, 9, 11
    by_qp = defaultdict(list)
    for number, dport, opcode, qp, psn, dmalen, ecn in rows:
        assert dport == "4791", number
        assert opcode != "", f"frame {number} not decoded as InfiniBand"
        by_qp[int(qp, 0)].append((int(psn), int(opcode), dmalen))
    assert len(by_qp) == 8, sorted(by_qp)  # a ring of eight: one QP per sender
    for qp, packets in by_qp.items():
        psns = [p for p, _, _ in packets]
        assert psns == list(range(len(psns))), f"QP {qp}: PSNs {psns[:10]}..."
        in_message = False
        for psn, opcode, dmalen in packets:
            if opcode in (first, only_imm):
                assert not in_message, f"QP {qp} PSN {psn}: a new message inside one"
                assert dmalen != "", f"QP {qp} PSN {psn}: no RETH"
                in_message = opcode == first
            else:
                assert in_message and opcode in (middle, last_imm), (qp, psn, opcode)
                assert dmalen == "", f"QP {qp} PSN {psn}: RETH on a middle packet"
                in_message = opcode == middle
    scapy_icrc_check(pcap)
    return f"{sent} frames, {len(by_qp)} QPs: tshark and scapy agree"


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def case_af_packet(args, work):
    return af_packet_run(args, work)


def case_af_packet_queues(args, work):
    # The kernel spreads a socket group's arrivals over its sockets by flow hash, which knows
    # nothing of where etwire placed each connection: frames reach the other queue's worker by
    # handover, and the run must still complete with every flow.
    # Two queues on one end and three on the other: the responder ends take the far port's queues
    # in turn of their own.
    summary = af_packet_run(args, work, queues=(2, 3))
    handed_over = 0
    for port, lcores in zip(summary["ports"], ([1, 2], [3, 1, 2])):
        queues = port["queues"]
        assert [q["lcore"] for q in queues] == lcores, queues
        assert all(q["tx_packets"] > 0 for q in queues), (port["name"], queues)
        assert sum(q["rx_packets"] for q in queues) == port["rx_packets"], port
        handed_over += sum(q["handed_over"] for q in queues)
    # Sixteen steering choices (eight connections, each way) all falling on etwire's queue by
    # chance is less likely than 1 in 65536.
    assert handed_over > 0, summary["ports"]
    # Fanout reorders now and then, and go-back-N resends: a resend always has a cause the
    # counters show (a receiver saw packets missing, a port dropped some, or a timer fired).
    resent = sum(p["retransmitted_packets"] for p in summary["ports"])
    seen = sum(p["missing_packets"] + p["drops"] + p["timeouts"] for p in summary["ports"])
    assert resent == 0 or seen > 0, summary["ports"]
    return (f"{summary['flows']} flows, {handed_over} frames handed over between queues, "
            f"{resent} resent, {seen} missing, dropped or timed out")


def af_packet_run(args, work, queues=(1, 1)):
    if os.geteuid() != 0:
        raise Skip("needs root to create a network namespace and a veth pair")
    ns = f"etwire-test-{os.getpid()}"
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "add", "etw0", "type", "veth", "peer", "name", "etw1")
        for dev in ("etw0", "etw1"):
            sh("ip", "-n", ns, "link", "set", dev, "mtu", "1500", "up")
        # One socket per queue pair (qpairs), in one fanout group per device.
        several = queues != (1, 1)

        def device(i, n, lcores):
            if n == 1:
                return f'vdev: "net_af_packet{i},iface=etw{i}"'
            return (f'vdev: "net_af_packet{i},iface=etw{i},qpairs={n}", queues: {n}, '
                    f"lcores: {lcores}")

        ports = f"""  - name: left
    backend: dpdk
    dpdk: {{{device(0, queues[0], "[1, 2]")}, peer: right}}
    speed: 1Gbps
    mtu: 1500
  - name: right
    backend: dpdk
    dpdk: {{{device(1, queues[1], "[3, 1, 2]")}, peer: left}}
    speed: 1Gbps
    mtu: 1500"""
        out = os.path.join(work, "out")
        path = os.path.join(work, "af_packet.yaml")
        trace = os.path.join(args.source_dir, "configs/traces/allreduce_8r/allreduce")
        with open(path, "w") as f:
            f.write(config_text("af-packet", trace, ports, out, pmtu=1024, iterations=1,
                                lcores="0@0,1@1,2@0,3@1" if several else "0",
                                qps_per_peer=4 if several else 1))
        run_etwire(args, path, prefix=("ip", "netns", "exec", ns))
        summary, flows = load_results(out)
        assert summary["status"] == "completed", summary["status"]
        assert summary["flows"] > 0 and summary["failed_flows"] == 0
        assert len(flows) == summary["flows"]
        left, right = summary["ports"]
        assert left["tx_packets"] > 0 and right["rx_packets"] > 0
        if several:
            return summary
        return f"{summary['flows']} flows across the veth pair"
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


CASES = {"ring": case_ring, "ring_workers": case_ring_workers, "ring_queues": case_ring_queues,
         "pcap": case_pcap,
         "af_packet": case_af_packet, "af_packet_queues": case_af_packet_queues}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--case", choices=sorted(CASES), action="append", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
    status = 0
    for name in args.case:
        work = tempfile.mkdtemp(prefix=f"etwire-dpdk-{name}-")
        start = time.monotonic()
        try:
            detail = CASES[name](args, work)
            print(f"ok {name} ({time.monotonic() - start:.1f} s): {detail}")
        except Skip as e:
            print(f"skip {name}: {e}")
            status = status or SKIP
        except Exception as e:  # noqa: BLE001 - report every failure the same way
            print(f"FAIL {name}: {e}")
            status = 1
        finally:
            if args.keep:
                print(f"  kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
