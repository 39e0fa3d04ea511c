"""An ns-3 router (tests/dut/ns3/red_router.cc) between two veths: a routed point-to-point
bottleneck whose egress queue, in each direction, is ns-3's RED marking ECN.

    port a: etw0 --veth-- r0 [node A] ==rate, delay, RED== [node B] r1 --veth-- etw1 :port b

Each host end (etw<i>) is where an etwire net_af_packet port attaches; ns-3 holds a raw socket on
the other end (r<i>). The router answers no ARP for etwire, nor asks: it has a permanent entry for
each etwire port's address, and etwire addresses its frames to the router's MAC
(ports[].next_hop_mac). Its RED counters are read when it stops (SIGTERM).
"""

import os
import re
import signal
import time

from netns import DeviceUnavailable


class Ns3Router:
    ROUTER_MACS = ("02:00:00:00:01:00", "02:00:00:00:01:01")
    ROUTER_IPS = ("10.0.0.254", "10.0.1.254")
    HOST_IPS = ("10.0.0.1", "10.0.1.1")

    def __init__(self, ns, binary, host_macs, work, *, rate="30Mbps", delay="50us", min_th=10,
                 max_th=30, max_size="100p", qw=1.0, l_interm=10, use_ecn=True):
        self.ns, self.binary, self.host_macs, self.work = ns, binary, host_macs, work
        self.settings = {"rate": rate, "delay": delay, "min-th": min_th, "max-th": max_th,
                         "max-size": max_size, "qw": qw, "l-interm": l_interm,
                         "use-ecn": "true" if use_ecn else "false"}
        self.log_path = os.path.join(work, "ns3-router.log")
        self.proc = None
        self.stats = None

    def host_interface(self, i):
        return f"etw{i}"

    def __enter__(self):
        if not self.binary or not os.path.exists(self.binary):
            raise DeviceUnavailable(
                f"the ns-3 router is not built ({self.binary or 'no path'}): libns3-dev is "
                "missing (scripts/setup.sh installs it; then re-run cmake)")
        ns = self.ns
        for i in (0, 1):
            ns.veth(f"etw{i}", f"r{i}")
            # etwire's frames carry complete checksums; frames the kernel's own stack might send
            # would not, and ns-3 checks them (checksums are written and checked: ChecksumEnabled).
            for dev in (f"etw{i}", f"r{i}"):
                ns.sh("ethtool", "-K", dev, "tx", "off", check=False)
        args = [self.binary, "--a-dev=r0", "--b-dev=r1",
                f"--a-mac={self.ROUTER_MACS[0]}", f"--b-mac={self.ROUTER_MACS[1]}",
                f"--a-router={self.ROUTER_IPS[0]}", f"--b-router={self.ROUTER_IPS[1]}",
                f"--a-host={self.HOST_IPS[0]}", f"--b-host={self.HOST_IPS[1]}",
                f"--a-host-mac={self.host_macs[0]}", f"--b-host-mac={self.host_macs[1]}",
                "--gentle=false", "--hard-drop=false",
                *(f"--{k}={v}" for k, v in self.settings.items())]
        self.proc = ns.start(*args, log_path=self.log_path)
        deadline = time.monotonic() + 20
        while True:
            log = self.log()
            if "ready" in log.splitlines():
                break
            if self.proc.poll() is not None:
                raise DeviceUnavailable(f"ns-3 router exited {self.proc.returncode}: "
                                        f"{log.strip()[-2000:] or 'no output'}")
            if time.monotonic() > deadline:
                raise DeviceUnavailable(f"ns-3 router not ready after 20 s: {log.strip()[-2000:]}")
            time.sleep(0.05)
        return self

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        """Stops the router (SIGTERM) and returns its RED counters per direction: ab (side a
        toward side b) and ba."""
        if self.stats is not None:
            return self.stats
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except Exception:  # noqa: BLE001 - a router that ignores SIGTERM is killed with the ns
                pass
        stats = {}
        for line in self.log().splitlines():
            m = re.match(r"red dir=(\w+) (.*)", line)
            if m:
                stats[m.group(1)] = {k: int(v) for k, v in
                                     (kv.split("=") for kv in m.group(2).split())}
        if set(stats) != {"ab", "ba"}:
            raise RuntimeError(f"the ns-3 router printed no RED counters: {self.log()[-2000:]}")
        self.stats = stats
        return stats

    def counters(self):
        """What reached each host end of the veths (before any socket), while it runs."""
        return {f"host_received_{i}": self.ns.link_rx_packets(f"etw{i}") for i in (0, 1)}

    def __exit__(self, *exc):
        return False  # the namespace kills the router and takes the veths with it
