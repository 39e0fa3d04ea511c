"""The runs of scripts/case-study-load-balancing.py and what the page reads from their files."""

import collections
import csv
import json
import math
import os
import re

# name, what the page calls it, settings. Sender spray keeps the switches on ECMP, which hashes
# the UDP source port the senders move on every packet.
MODES = [
    ("ecmp", "ECMP", []),
    ("flowlet", "flowlet", ["fabric.load_balancing.mode=flowlet"]),
    ("adaptive", "adaptive", ["fabric.load_balancing.mode=adaptive"]),
    ("spray", "switch spray", ["fabric.load_balancing.mode=spray"]),
    ("sender-spray", "sender spray", ["transport.entropy.mode=spray"]),
]
RECEIVERS = [
    ("gbn", "go-back-N", ["transport.receiver=go-back-n"]),
    ("ooo", "out-of-order", ["transport.receiver=out-of-order"]),
]
# The same spraying said the other way: switches that spray by the hash of the source port.
SWITCH_ENTROPY = ["fabric.load_balancing.mode=spray", "fabric.load_balancing.spray=entropy",
                  "transport.entropy.mode=spray", "transport.receiver=out-of-order"]
# How far out of order packets come: the PSNs an out-of-order receiver reports missing when a
# packet this many PSNs past them has arrived (64, the default, is the main runs').
LOSS_AFTER = [1, 4, 16, 64]
PROBED = ["flowlet", "adaptive", "spray", "sender-spray"]
SEEDS = [1, 2, 3]
SEEDED = [("ecmp", "gbn"), ("adaptive", "gbn"), ("adaptive", "ooo")]
DCQCN_OFF = ["transport.dcqcn.enabled=false"]
# Without DCQCN, to tell what the paths cost from what the rate cuts cost; and on one switch,
# which has no paths to choose: what is left is the all-to-all's own.
REFERENCES = [
    ("ecmp-dcqcn-off", "ECMP, DCQCN off", DCQCN_OFF),
    ("adaptive-ooo-dcqcn-off", "adaptive, out-of-order, DCQCN off",
     DCQCN_OFF + ["fabric.load_balancing.mode=adaptive", "transport.receiver=out-of-order"]),
    ("single-switch-dcqcn-off", "one 64-port switch, DCQCN off",
     DCQCN_OFF + ["fabric.topology=single-switch"]),
    ("single-switch", "one 64-port switch", ["fabric.topology=single-switch"]),
    # Go-back-N's stalls wait for the retransmission timer; a short first timeout, as hardware
    # NICs may use, in place of etwire's default (a quarter of the 67 ms QP timeout).
    ("adaptive-gbn-timeout-100us", "adaptive, go-back-N, first timeout 100 us",
     ["fabric.load_balancing.mode=adaptive", "transport.adaptive_first_timeout=100us"]),
]

# Bytes a data packet carries besides its payload (nic/frame_size.h): Ethernet 14, IPv4 20,
# UDP 8, BTH 12, ICRC 4, FCS 4, preamble, SFD and inter-frame gap 20.
DATA_OVERHEAD = 82
RETH, IMMEDIATE = 16, 4  # on a message's first packet; on its last (write with immediate)


def settings(mode, receiver):
    return dict((m, s) for m, _, s in MODES)[mode] + dict((r, s) for r, _, s in RECEIVERS)[receiver]


def a2a_variants():
    """(name, settings) of every all-to-all run."""
    runs = [(f"{m}-{r}", settings(m, r)) for m, _, _ in MODES for r, _, _ in RECEIVERS]
    runs.append(("switch-entropy-ooo", SWITCH_ENTROPY))
    runs += [(f"{m}-ooo-loss-{k}", settings(m, "ooo") + [f"transport.out_of_order.loss_after={k}"])
             for m in PROBED for k in LOSS_AFTER if k != 64]
    runs += [(f"{m}-{r}-seed-{s}", settings(m, r) + [f"run.seed={s}"])
             for m, r in SEEDED for s in SEEDS]
    runs += [(name, extra) for name, _, extra in REFERENCES]
    return runs


def mix_variants():
    return [(f"{m}-{r}", settings(m, r)) for m, _, _ in MODES for r, _, _ in RECEIVERS]


class Run:
    """What the page reads from one run's result files."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "summary.json")) as f:
            self.summary = json.load(f)
        self.fct = {f["type"]: f for f in self.summary["fct"]}
        self.collectives = [r for r in self._csv("collectives.csv") if r["warmup"] == "false"]
        self.naks = sum(int(r["naks_received"]) for r in self._csv("qps.csv")
                        if r["role"] == "requester")
        self.deepest, self.uplink_spread = self._queues()

    def _csv(self, name):
        with open(os.path.join(self.path, name)) as f:
            return list(csv.DictReader(f))

    def total(self, key):
        return sum(p[key] or 0 for p in self.summary["ports"])

    def end_ms(self, kind):
        ends = [int(r["end_ns"]) for r in self.collectives if r["type"] == kind]
        return max(ends) / 1e6 if ends else None

    def busbw(self):
        return [float(r["busbw_GBps"]) for r in self.collectives if r["type"] == "all_reduce"]

    def fcts(self, kind="all_to_all"):
        """Every completed flow's FCT in ns, sorted, of the collectives of one type."""
        kinds = {r["instance"]: r["type"] for r in self._csv("collectives.csv")}
        return sorted(int(r["fct_ns"]) for r in self._csv("flows.csv")
                      if kinds[r["collective"]] == kind and r["fct_ns"])

    def _queues(self):
        """The deepest any egress queue of each kind of switch port has been (bytes, exact: the
        queues keep their maximum), and the busiest leaf uplink's bytes over the mean uplink's
        (an estimate from the samples' utilization: a link idle with an empty queue at a sample
        has no row, and what it carried since the sample before is lost)."""
        deepest = collections.Counter()
        busy = collections.defaultdict(dict)
        with open(os.path.join(self.path, "queues.csv")) as f:
            rows = csv.reader(f)
            column = {name: i for i, name in enumerate(next(rows))}
            at, port, depth, used = (column[k] for k in ("time_ns", "switch_port",
                                                         "max_depth_bytes", "utilization"))
            for row in rows:
                switch, peer = row[port].split("/")
                kind = ("spine down" if switch.startswith("spine") else
                        "leaf up" if peer.startswith("spine") else "to host")
                deepest[kind] = max(deepest[kind], int(row[depth]))
                if kind == "leaf up":
                    # One row per traffic class, each with the port's utilization: count it once.
                    busy[row[port]][row[at]] = float(row[used])
        loads = [sum(samples.values()) for samples in busy.values()]
        spread = max(loads) / (sum(loads) / len(loads)) if loads else None
        return deepest, spread


def rate_bps(text):
    match = re.fullmatch(r"([\d.]+)\s*([KMGT]?)bps", str(text))
    if not match:
        raise ValueError(f"not a rate etwire's configurations use: {text}")
    return float(match.group(1)) * 10 ** (3 * " KMGT".index(match.group(2) or " "))


def duration_ns(text):
    match = re.fullmatch(r"([\d.]+)\s*(ns|us|ms|s)", str(text))
    if not match:
        raise ValueError(f"not a duration etwire's configurations use: {text}")
    return float(match.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[match.group(2)]


def pmtu(config):
    """transport.pmtu, or the largest that every port's MTU carries (pmtu + 96 <= MTU)."""
    chosen = config.get("transport", {}).get("pmtu", "auto")
    if chosen != "auto":
        return int(chosen)
    mtu = min(p["mtu"] for p in config["ports"])
    return max(p for p in (256, 512, 1024, 2048, 4096) if p + 96 <= mtu)


class Bound:
    """The FCT of a host's last all-to-all flow on a fabric where no link but its own host link
    holds it up: its link sends everything the host has for the collective back to back, and the
    last packet then crosses the longest path without waiting in a queue. The host's QPs share
    its link packet by packet, so its flows all end within the last round of that time."""

    def __init__(self, config, trace_bytes, group_size, topology):
        fabric = config["fabric"]
        speed = min(rate_bps(p["speed"]) for p in config["ports"])
        size = pmtu(config)
        qps = config.get("collectives", {}).get("qps_per_peer", 1)
        self.message = trace_bytes // group_size // qps
        self.packets = math.ceil(self.message / size)
        self.message_wire = self.message + self.packets * DATA_OVERHEAD + RETH + IMMEDIATE
        self.messages = (group_size - 1) * qps
        self.host_ns = self.messages * self.message_wire * 8e9 / speed
        # Cross-leaf: host, leaf, spine, leaf, host; each switch stores the last frame, waits
        # its latency and sends it on at the port speed (the links are at least as fast).
        self.switches = 3 if topology == "leaf-spine" else 1
        frame_ns = (min(size, self.message) + DATA_OVERHEAD + IMMEDIATE) * 8e9 / speed
        self.path_ns = ((self.switches + 1) * duration_ns(fabric["propagation_delay"])
                        + self.switches * (duration_ns(fabric["switch_latency"]) + frame_ns))
        self.ns = self.host_ns + self.path_ns
        self.speed = speed
        self.pmtu = size
