#!/usr/bin/env python3
"""End-to-end tests of telemetry.record.pcap: etwire runs, then tshark and scapy read the files.

    python3 tests/capture/capture_e2e_test.py --etwire build/release/etwire --source-dir . \
        --case NAME

Cases:

  twin        configs/twin-congestion.yaml, one iteration, with ECN marking low enough that the
              run marks and answers with CNPs. Every port has a capture file holding exactly the
              frames its counters in summary.json say it sent and received; tshark decodes every
              frame of every file as InfiniBand over UDP 4791 (none malformed) with the run's QP
              numbers; CE-marked data frames and CNPs are in the capture, as many as the counters
              say; scapy recomputes the ICRC of every frame of the files of a port that received
              CE marks and one that received CNPs. Each file (pcapng) names its port as the
              interface, and its frames are outbound exactly when their IPv4 source is one of the
              port's addresses, as many as the port sent, the others inbound.
  twin_corrupt  configs/loopback-demo.yaml with a lossy fault that corrupts frames on one
              host's link: that host's capture holds the damaged frames its NIC discarded, and
              scapy finds exactly as many wrong ICRCs in it as the fault's note counts.
  twin_limits The same run with telemetry.capture limits: max_packets caps the frames of all
              files together, snap_length cuts each frame (tshark sees the original length), and
              the summary's notes say the capture stopped at its limit.
  dpdk_ring   configs/dpdk-ring.yaml (two net_ring ports wired back to back) with capture on:
              each port's file holds frames of both directions, outbound exactly when their IPv4
              source is one of the port's addresses, and names the port as the interface; every
              frame the ports sent or received is in a file or counted as lost in the notes;
              tshark and scapy accept every captured frame.
  twin_switch_ports  configs/twin-congestion.yaml with telemetry.capture.switch_ports naming both
              ends of a leaf-spine cable and the leaf port facing a host whose NIC storms PFC
              pauses: each file holds the frames of the other end of its cable, byte for byte
              (nothing is lost on these cables), what one end sent the other received, the
              storm's pauses included as many as its note counts, and each file names its port; tshark decodes every frame of the switch ports' files and scapy recomputes
              the uplink's ICRCs.
  bad_dir     A results directory where capture/ cannot be made: the run stops before the first
              packet with an error naming the path.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from frame_checks import same_frames, scapy_icrc_check, tshark_fields  # noqa: E402

SKIP = 77
CNP = 0x81


def run_etwire(args, config, out, *sets, check=True):
    cmd = [args.etwire, "run", os.path.join(args.source_dir, config), "--out", out,
           "--no-metrics"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if check and proc.returncode != 0:
        raise AssertionError(f"etwire failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return proc


CONGESTED = ("telemetry.record.pcap=true", "workload.iterations=1", "workload.warmup_iterations=0",
             "fabric.ecn.kmin=20KB", "fabric.ecn.kmax=200KB", "collectives.chunk_size=64KiB")


def congested_run(args, out, *extra):
    return run_etwire(args, "configs/twin-congestion.yaml", out, *CONGESTED, *extra)


def plan_addresses(args, config, *sets):
    """By port name, the IPv4 addresses of its ranks; by IPv4 address, the QP numbers of the ranks
    behind it, as the wire carries them (each port numbers its own); from `etwire plan --json`."""
    cmd = [args.etwire, "plan", os.path.join(args.source_dir, config), "--json"]
    for s in sets:
        cmd += ["--set", s]
    plan = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    ips, qpns = {}, {}
    for job in plan["jobs"]:
        for rank in job["ranks"]:
            ips.setdefault(rank["port"], set()).add(rank["ipv4"])
            qpns.setdefault(rank["ipv4"], set()).update(
                range(rank["qpn_first"], rank["qpn_first"] + rank["qpn_count"]))
    return ips, qpns


def summary_of(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


# The pcapng packet flags' direction (frame.packet_flags_direction).
INBOUND, OUTBOUND = 1, 2
DIRECTION_FIELDS = ["frame.interface_name", "frame.packet_flags_direction", "ip.src"]


def check_directions(pcap, port, addresses, rows):
    """Each row ends with DIRECTION_FIELDS: the file names `port` as every frame's interface, and
    a frame is outbound exactly when its IPv4 source is one of `addresses` (the port's), inbound
    otherwise. Returns the frames each way, {INBOUND: n, OUTBOUND: n}."""
    count = {INBOUND: 0, OUTBOUND: 0}
    for i, row in enumerate(rows):
        interface, flags, src = row[-3:]
        assert interface == port, f"{pcap} frame {i + 1}: interface {interface!r}"
        assert flags != "", f"{pcap} frame {i + 1}: no direction"
        direction = int(flags, 16)
        assert direction in count, f"{pcap} frame {i + 1}: direction {flags}"
        if src:
            expected = OUTBOUND if src in addresses else INBOUND
            assert direction == expected, (pcap, i + 1, src, flags)
        count[direction] += 1
    return count


def case_twin(args, work):
    out = os.path.join(work, "out")
    congested_run(args, out)
    summary = summary_of(out)
    ips, qpns = plan_addresses(args, "configs/twin-congestion.yaml", *CONGESTED)
    ce_port = cnp_port = None
    total = 0
    for port in summary["ports"]:
        pcap = os.path.join(out, "capture", port["name"] + ".pcapng")
        assert os.path.exists(pcap), f"no capture file for port {port['name']}"
        rows = tshark_fields(pcap, ["frame.number", "infiniband.bth.opcode",
                                    "infiniband.bth.destqp", "ip.dsfield.ecn", "_ws.malformed",
                                    "eth.type", "ip.dst"] + DIRECTION_FIELDS)
        expected = port["tx_packets"] + port["rx_packets"]
        assert len(rows) == expected, (port["name"], len(rows), expected)
        total += len(rows)
        ways = check_directions(pcap, port["name"], ips[port["name"]], rows)
        assert ways == {OUTBOUND: port["tx_packets"], INBOUND: port["rx_packets"]}, (pcap, ways)
        ce_in = cnp_in = cnp_out = pfc = 0
        for number, opcode, qp, ecn, malformed, ethertype, dst, *_ in rows:
            assert malformed == "", f"{port['name']} frame {number}: malformed"
            if ethertype == "0x8808":  # a PFC frame: a pause, or the resume after it
                pfc += 1
                continue
            assert opcode != "", f"{port['name']} frame {number}: not decoded as InfiniBand"
            assert int(qp, 0) in qpns[dst], f"{port['name']} frame {number}: QP {qp} not {dst}'s"
            arriving = dst in ips[port["name"]]
            if int(opcode) == CNP:
                cnp_in += arriving
                cnp_out += not arriving
            elif ecn == "3" and arriving:
                ce_in += 1
        assert ce_in == port["ecn_marked_received"], (port["name"], ce_in,
                                                      port["ecn_marked_received"])
        assert cnp_in == port["cnps_received"], (port["name"], cnp_in, port["cnps_received"])
        assert cnp_out == port["cnps_sent"], (port["name"], cnp_out, port["cnps_sent"])
        # The counters count pauses (XOFF) only, not the resumes (XON) that end them.
        pauses = port["pfc_pauses_sent"] + port["pfc_pauses_received"]
        assert pauses <= pfc <= 2 * pauses, (port["name"], pfc, pauses)
        if ce_in and ce_port is None:
            ce_port = pcap
        if cnp_in and cnp_port is None:
            cnp_port = pcap
    assert ce_port and cnp_port, "the run marked nothing: the case checks nothing"
    for pcap in (ce_port, cnp_port):
        scapy_icrc_check(pcap, allow_pfc=True)
    marked = sum(p["ecn_marked_received"] for p in summary["ports"])
    return (f"{total} frames in {len(summary['ports'])} files match the counters, each way; "
            f"{marked} CE marks and the CNPs found; scapy agrees on {os.path.basename(ce_port)} "
            f"and {os.path.basename(cnp_port)}")




def case_twin_corrupt(args, work):
    out = os.path.join(work, "out")
    demo = "configs/loopback-demo.yaml"
    ports = json.loads(subprocess.run(
        [args.etwire, "plan", os.path.join(args.source_dir, demo), "--json"],
        capture_output=True, text=True, check=True).stdout)["ports"]
    victim = ports[0]["name"]
    run_etwire(args, demo, out, "telemetry.record.pcap=true",
               f"fabric.faults=[{{kind: lossy, link: {victim}, corrupt_probability: 0.02}}]")
    notes = " ".join(summary_of(out)["notes"])
    match = re.search(r"(\d+) delivered with a bad ICRC", notes)
    assert match, notes
    bad_total = int(match.group(1))
    assert bad_total > 0, "nothing was corrupted: the case checks nothing"
    # Frames damaged on their way to the victim are discarded by its NIC, after its capture saw
    # them; those it sent are captured whole as they leave.
    scapy_icrc_check(os.path.join(out, "capture", victim + ".pcapng"), allow_pfc=True,
                     expected_bad=bad_total)
    return f"{bad_total} damaged frames in the captures, each with a wrong ICRC"


def case_twin_limits(args, work):
    out = os.path.join(work, "out")
    proc = congested_run(args, out, "telemetry.capture.max_packets=5000",
                         "telemetry.capture.snap_length=96")
    total = 0
    for name in sorted(os.listdir(os.path.join(out, "capture"))):
        assert name.endswith(".pcapng"), name
        rows = tshark_fields(os.path.join(out, "capture", name),
                             ["frame.len", "frame.cap_len"])
        total += len(rows)
        for length, kept in rows:
            assert int(kept) == min(int(length), 96), (name, length, kept)
        assert any(int(length) > 96 for length, _ in rows) or not rows, name
    assert total == 5000, total
    notes = " ".join(summary_of(out)["notes"])
    assert "stopped at its limit" in notes, notes
    assert "stopped at its limit" in proc.stdout, proc.stdout[-2000:]
    return f"{total} frames of at most 96 bytes; the notes say the limit stopped it"


def case_dpdk_ring(args, work):
    out = os.path.join(work, "out")
    proc = run_etwire(args, "configs/dpdk-ring.yaml", out, "telemetry.record.pcap=true",
                      check=False)
    if proc.returncode != 0 and "EAL" in proc.stderr:
        print(f"skipped: DPDK cannot start here: {proc.stderr[-500:]}")
        sys.exit(SKIP)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = summary_of(out)
    ips, _ = plan_addresses(args, "configs/dpdk-ring.yaml", "telemetry.record.pcap=true")
    captured = 0
    for port in summary["ports"]:
        pcap = os.path.join(out, "capture", port["name"] + ".pcapng")
        rows = tshark_fields(pcap, ["frame.number", "infiniband.bth.opcode", "_ws.malformed"] +
                             DIRECTION_FIELDS)
        assert rows, f"{port['name']}: nothing captured"
        assert all(opcode != "" and malformed == "" for _, opcode, malformed, *_ in rows), pcap
        ways = check_directions(pcap, port["name"], ips[port["name"]], rows)
        assert ways[INBOUND] and ways[OUTBOUND], f"{pcap}: frames of one direction only: {ways}"
        captured += len(rows)
        scapy_icrc_check(pcap)
    moved = sum(p["tx_packets"] + p["rx_packets"] for p in summary["ports"])
    notes = " ".join(summary["notes"])
    match = re.search(r"capture: (\d+) of (\d+) frames lost", notes)
    lost = int(match.group(1)) if match else 0
    assert captured + lost == moved, (captured, lost, moved, notes)
    if match:
        assert int(match.group(2)) == moved, (match.group(0), moved)
        assert match.group(0) in proc.stderr, proc.stderr[-2000:]
    return f"{captured} frames captured and {lost} lost of {moved} the ports moved"


def case_twin_switch_ports(args, work):
    out = os.path.join(work, "out")
    run_etwire(args, "configs/twin-congestion.yaml", out, "telemetry.record.pcap=true",
               "workload.iterations=1", "workload.warmup_iterations=0",
               "telemetry.capture.switch_ports=[leaf0/spine0, spine0/leaf0, leaf0/h2]",
               "fabric.pfc={enabled: true}",
               "fabric.faults=[{kind: pfc-storm, port: h2, at: 100us, until: 300us}]")
    capture = os.path.join(out, "capture")
    notes = " ".join(summary_of(out)["notes"])
    match = re.search(r"(\d+) pauses sent by it", notes)
    assert match and int(match.group(1)) > 0, notes
    pauses = int(match.group(1))
    uplink = os.path.join(capture, "fabric", "leaf0", "spine0.pcapng")
    ends = [(os.path.join(capture, "h2.pcapng"),
             os.path.join(capture, "fabric", "leaf0", "h2.pcapng")),
            (uplink, os.path.join(capture, "fabric", "spine0", "leaf0.pcapng"))]
    counts = []
    for near_end, switch_end in ends:
        counts.append(same_frames(near_end, switch_end))
        assert counts[-1] > 0, f"{switch_end}: nothing captured"
        ways = {}
        for pcap in (near_end, switch_end):
            interface = os.path.relpath(pcap, capture).removeprefix("fabric/")[:-len(".pcapng")]
            rows = tshark_fields(pcap, ["frame.number", "infiniband.bth.opcode", "eth.type",
                                        "_ws.malformed", "frame.interface_name",
                                        "frame.packet_flags_direction"])
            assert len(rows) == counts[-1], (pcap, len(rows), counts[-1])
            ways[pcap] = {INBOUND: 0, OUTBOUND: 0}
            pfc_out = 0
            for number, opcode, ethertype, malformed, name, flags in rows:
                assert malformed == "", f"{pcap} frame {number}: malformed"
                assert name == interface, f"{pcap} frame {number}: interface {name!r}"
                assert opcode != "" or ethertype == "0x8808", f"{pcap} frame {number}: not RoCE"
                direction = int(flags, 16)
                ways[pcap][direction] += 1
                pfc_out += ethertype == "0x8808" and direction == OUTBOUND
            if pcap.endswith("/h2.pcapng") and "fabric" not in pcap:
                assert pfc_out == pauses, (pcap, pfc_out, pauses)
        # What one end sent, the other received.
        assert ways[near_end][OUTBOUND] == ways[switch_end][INBOUND], ways
        assert ways[near_end][INBOUND] == ways[switch_end][OUTBOUND], ways
    scapy_icrc_check(uplink, allow_pfc=True)
    return (f"leaf0/h2 mirrors h2 ({counts[0]} frames, {pauses} storm pauses); spine0/leaf0 "
            f"mirrors leaf0/spine0 ({counts[1]} frames); scapy agrees on the uplink")


def case_bad_dir(args, work):
    out = os.path.join(work, "out")
    os.makedirs(out)
    with open(os.path.join(out, "capture"), "w") as f:
        f.write("a file where the capture folder goes\n")
    proc = run_etwire(args, "configs/loopback-demo.yaml", out, "telemetry.record.pcap=true",
                      check=False)
    assert proc.returncode != 0, "the run went on without its capture folder"
    assert os.path.join(out, "capture") in proc.stderr, proc.stderr
    assert not os.path.exists(os.path.join(out, "summary.json")), "the run started"
    return "refused before the first packet: " + proc.stderr.strip().splitlines()[-1]


CASES = {"twin": case_twin, "twin_corrupt": case_twin_corrupt, "twin_limits": case_twin_limits,
         "twin_switch_ports": case_twin_switch_ports, "dpdk_ring": case_dpdk_ring,
         "bad_dir": case_bad_dir}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    args = parser.parse_args()
    if shutil.which("tshark") is None:
        print("skipped: tshark is not installed (scripts/setup.sh installs it)")
        return SKIP
    work = tempfile.mkdtemp(prefix=f"etwire-capture-{args.case}-")
    try:
        print(f"{args.case}: {CASES[args.case](args, work)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
