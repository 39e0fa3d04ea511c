"""What the device cases share: running etwire (in a device's namespace), reading its results,
an etwire port on a veth end, and the figures each case appends to --record."""

import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from dpdk_runs import Skip, run_dpdk_etwire  # noqa: E402

__all__ = ["Skip", "af_packet_port", "append_records", "as_sent_figures", "check_as_sent", "etwire",
           "load_summary", "twin_buffer"]


def etwire(args, *cmd, ns=None, timeout=300, check=True, measure_cpu=False):
    prefix = ["ip", "netns", "exec", ns.name] if ns else []
    return run_dpdk_etwire(args.etwire, cmd, prefix=prefix, timeout=timeout, check=check,
                           measure_cpu=measure_cpu)


def load_summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def af_packet_port(name, index, mac, speed, lcore=None, **keys):
    """A ports entry for a net_af_packet port on veth end etw<index>; keys are more of its keys
    (ipv4, next_hop_mac)."""
    # A deep socket ring: the host end of a veth has no flow control toward the device.
    dpdk = f'vdev: "net_af_packet{index},iface=etw{index},framecnt=4096"'
    if lcore is not None:
        dpdk += f", lcore: {lcore}"
    more = "".join(f"    {key}: {value}\n" for key, value in keys.items())
    return (f"  - name: {name}\n    backend: dpdk\n    dpdk: {{{dpdk}}}\n    speed: {speed}\n"
            f"    mtu: 1500\n    mac: {mac}\n{more}")


def twin_buffer(queue_bytes, ports, reserve):
    """fabric.buffer for a twin switch whose queue toward one port holds queue_bytes in all, as
    the shaper's limit does: per-port shares, and what the other ports' ingress reserves add."""
    share = queue_bytes - (ports - 1) * reserve
    return {"size": ports * (share + reserve), "mode": "per-port", "ingress_reserve": reserve}


def append_records(args, records):
    """Appends each record (a dict of figures) as a JSON line to --record, if given, with the
    machine's load average over the last minute, since lab times depend on what else ran."""
    if args.record:
        load = round(os.getloadavg()[0], 2)
        with open(args.record, "a") as f:
            for record in records:
                f.write(json.dumps({**record, "load_average": load}) + "\n")


def as_sent_figures(doc, prefix="as_sent", port="rx"):
    """The receiving port (rx, or `port`) of an as-sent replay (etwire replay's as-sent.json):
    what reached it in the lab (its capture) and in the twin fed the frames the lab sent; lost =
    data frames sent to it less those."""
    rx = next(p for p in doc["ports"] if p["name"] == port)
    figures = {f"{prefix}_frames_not_captured":
               sum(p["frames_not_captured"] for p in doc["ports"])}
    for side in ("lab", "twin"):
        figures[f"{prefix}_{side}_ce"] = rx[side]["ce_marked"]
        figures[f"{prefix}_{side}_lost"] = rx["data_sent_to"] - rx[side]["data_frames"]
        figures[f"{prefix}_{side}_last_ms"] = rx[side]["last_data_ns"] / 1e6
    return figures


# The as-sent prediction against the lab: the last data frame's arrival within this share, CE
# marks within AS_SENT_PERCENT, and data frames lost within AS_SENT_PERCENT or AS_SENT_LOST_FLOOR
# frames, whichever is more (runs where the device dropped a handful). Over runs as a series (a
# device in real time on a shared machine may drain slower in some runs than in others, which no
# model of it can know): a metric fails only when the whole 95 % interval of the mean delta lies
# beyond its band; a run alone, by its own delta.
AS_SENT_LAST_SHARE = 0.10
AS_SENT_PERCENT = 20
AS_SENT_LOST_FLOOR = 20
# Student's t at 97.5 % for 1 to 4 degrees of freedom.
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}


def check_as_sent(figs, prefix="as_sent"):
    """figs: one run's figures or a series' (a list)."""
    figs = figs if isinstance(figs, list) else [figs]
    for fig in figs:
        assert fig[f"{prefix}_frames_not_captured"] == 0, fig
    share = AS_SENT_PERCENT / 100
    for metric, band_of in (("last_ms", lambda lab: AS_SENT_LAST_SHARE * lab),
                            ("ce", lambda lab: share * lab),
                            ("lost", lambda lab: max(share * lab, AS_SENT_LOST_FLOOR))):
        labs = [fig[f"{prefix}_lab_{metric}"] for fig in figs]
        deltas = [fig[f"{prefix}_twin_{metric}"] - lab for fig, lab in zip(figs, labs)]
        mean = sum(deltas) / len(deltas)
        half = 0
        if len(deltas) > 1:
            sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / (len(deltas) - 1))
            half = T_975[len(deltas) - 1] * sd / math.sqrt(len(deltas))
        band = band_of(sum(labs) / len(labs))
        assert mean - half <= band and mean + half >= -band, (prefix, metric, deltas, band, figs)
