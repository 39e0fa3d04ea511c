"""What the device cases share: running etwire (in a device's namespace), reading its results,
an etwire port on a veth end, and the figures each case appends to --record."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from dpdk_runs import Skip, run_dpdk_etwire  # noqa: E402

__all__ = ["Skip", "af_packet_port", "append_records", "etwire", "load_summary", "twin_buffer"]


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
    """Appends each record (a dict of figures) as a JSON line to --record, if given."""
    if args.record:
        with open(args.record, "a") as f:
            for record in records:
                f.write(json.dumps(record) + "\n")
