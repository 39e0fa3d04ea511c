"""Checks of captured RoCEv2 frames shared by the end-to-end tests: tshark's fields of every
frame, and scapy's RoCE layer recomputing every ICRC (under the system Python, where Debian's
python3-scapy is). Both read pcap (DPDK's net_pcap device writes it) and pcapng (etwire's
capture files); scapy's rdpcap tells them apart by their first bytes."""

import subprocess


def tshark_fields(pcap, fields, display_filter=None):
    """One list of `fields` per frame of the capture file `pcap`, decoded with UDP 4791 as
    InfiniBand."""
    cmd = ["tshark", "-r", pcap, "-d", "udp.port==4791,infiniband", "-T", "fields",
           "-E", "separator=|", "-E", "occurrence=f"]
    if display_filter:
        cmd += ["-Y", display_filter]
    for field in fields:
        cmd += ["-e", field]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"tshark failed on {pcap}: {proc.stderr}")
    return [line.split("|") for line in proc.stdout.splitlines() if line]


_SCAPY_CHECK = r"""
import sys
from scapy.all import UDP, Ether, bind_layers, raw, rdpcap
from scapy.contrib.roce import BTH
bind_layers(UDP, BTH, dport=4791)
frames = rdpcap(sys.argv[1])
pfc_allowed = sys.argv[2] == "1"
expected_bad = int(sys.argv[3])
bad = pfc = 0
for i, frame in enumerate(frames):
    bth = frame.getlayer(BTH)
    if bth is None:
        if pfc_allowed and frame.haslayer(Ether) and frame[Ether].type == 0x8808:
            pfc += 1
            continue
        print(f"frame {i + 1}: no BTH")
        bad += 1
        continue
    on_wire = raw(bth)[-4:]
    expected = bth.compute_icrc(None)
    if on_wire != expected:
        print(f"frame {i + 1}: ICRC {on_wire.hex()}, scapy computes {expected.hex()}")
        bad += 1
print(f"{len(frames)} frames ({pfc} PFC), {bad} bad")
sys.exit(1 if bad != expected_bad or not frames else 0)
"""


def scapy_icrc_check(pcap, allow_pfc=False, expected_bad=0):
    """Every frame of the capture file `pcap` is RoCEv2 (or, if allowed, a MAC control frame) and all but
    `expected_bad` of them carry the ICRC scapy computes; raises AssertionError naming the frames
    that do not when the count differs."""
    proc = subprocess.run(["/usr/bin/python3", "-c", _SCAPY_CHECK, pcap,
                           "1" if allow_pfc else "0", str(expected_bad)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"scapy ICRC check of {pcap}: " + proc.stdout[-2000:] +
                             proc.stderr[-2000:])
    return proc.stdout.strip()


_SAME_FRAMES = r"""
import sys
from collections import Counter
from scapy.all import rdpcap
a, b = (Counter(bytes(frame) for frame in rdpcap(path)) for path in sys.argv[1:3])
print(sum(a.values()), sum(b.values()))
sys.exit(0 if a == b else 1)
"""


def same_frames(pcap_a, pcap_b):
    """Whether two captures hold the same frames, byte for byte and as many of each, in any order
    (the two ends of a cable that lost nothing); returns the number of frames, and raises
    AssertionError with both counts when they differ."""
    proc = subprocess.run(["/usr/bin/python3", "-c", _SAME_FRAMES, pcap_a, pcap_b],
                          capture_output=True, text=True, timeout=600)
    counts = proc.stdout.split()
    if proc.returncode != 0 or len(counts) != 2:
        raise AssertionError(f"{pcap_a} and {pcap_b} hold different frames ({' and '.join(counts)}"
                             f" frames): {proc.stderr[-2000:]}")
    return int(counts[0])
