"""A Linux bridge whose port toward one host shapes with tbf: an exact bottleneck with tail drop.

    host port i  --veth--  bridge port brp<i>  (brp<bottleneck> egress: tbf rate/burst/limit)

Each host end (etw<i>) is where an etwire net_af_packet port attaches. The bridge learns
nothing: a static forwarding entry per host MAC sends each frame straight to its port, so no
frame is flooded and the shaper's counters hold exactly the frames sent to the bottleneck host.
"""

from netns import settled


class TbfBridge:
    def __init__(self, ns, macs, *, bottleneck=0, rate="200mbit", burst="32kb", limit="64kb"):
        self.ns = ns
        self.macs = macs
        self.bottleneck = bottleneck
        self.rate, self.burst, self.limit = rate, burst, limit

    def host_interface(self, i):
        return f"etw{i}"

    def bottleneck_interface(self):
        return f"brp{self.bottleneck}"

    def __enter__(self):
        ns = self.ns
        ns.sh("ip", "link", "add", "br0", "type", "bridge", "ageing_time", "0")
        ns.sh("ip", "link", "set", "br0", "up")
        for i, mac in enumerate(self.macs):
            ns.veth(f"etw{i}", f"brp{i}")
            ns.sh("ip", "link", "set", f"brp{i}", "master", "br0")
            ns.sh("bridge", "fdb", "add", mac, "dev", f"brp{i}", "master", "static")
        ns.sh("tc", "qdisc", "add", "dev", self.bottleneck_interface(), "root", "tbf", "rate",
              self.rate, "burst", self.burst, "limit", self.limit)
        self.wait_quiet()
        return self

    def wait_quiet(self, quiet_s=1.0, at_most_s=10.0):
        """A port coming up sends a frame or so of its own within the first second; counting
        starts once nothing has passed the shaper for quiet_s."""
        settled(self.counters, quiet_s=quiet_s, at_most_s=at_most_s, poll_s=0.1,
                what="the bridge's counters")

    def __exit__(self, *exc):
        return False  # the namespace takes the bridge with it

    def counters(self):
        """What the shaper forwarded and dropped, and what the bottleneck host's veth end
        received (what reached the host, before any socket)."""
        shaper = self.ns.qdisc_stats(self.bottleneck_interface())
        return {"shaper_sent": shaper["packets"], "shaper_dropped": shaper["drops"],
                "host_received": self.ns.link_rx_packets(f"etw{self.bottleneck}")}
