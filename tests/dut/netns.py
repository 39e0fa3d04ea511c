"""Network namespaces, veth pairs and commands inside them, for the devices under test.

Everything a device sets up lives in a namespace the test creates, so tearing down is deleting
the namespace (and killing what runs in it): nothing is left on the host even when a case fails.
"""

import json
import os
import signal
import subprocess
import time


class DeviceUnavailable(Exception):
    """The device cannot start on this machine; the message is the device's own error."""


def settled(read, *, quiet_s, at_most_s, poll_s, what):
    """read()'s value once it has not changed for quiet_s (polled every poll_s); RuntimeError
    naming `what` when it keeps changing past at_most_s."""
    start = last_change = time.monotonic()
    seen = read()
    while time.monotonic() - last_change < quiet_s:
        if time.monotonic() - start > at_most_s:
            raise RuntimeError(f"{what} keep moving: {seen}")
        time.sleep(poll_s)
        now = read()
        if now != seen:
            seen, last_change = now, time.monotonic()
    return seen


def sh(*cmd, check=True):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


class Namespace:
    """A network namespace of the test's own: `with Namespace("tbf") as ns: ns.sh(...)`."""

    def __init__(self, label):
        self.name = f"etwire-dut-{label}-{os.getpid()}"
        self.processes = []

    def __enter__(self):
        if os.geteuid() != 0:
            raise DeviceUnavailable("needs root to create a network namespace")
        proc = sh("ip", "netns", "add", self.name, check=False)
        if proc.returncode != 0:
            raise DeviceUnavailable(f"ip netns add: {proc.stderr.strip()}")
        # No IPv6: link-local addresses would send router solicitations and MLD reports through
        # the device, and its counters must hold only etwire's frames.
        self.sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        self.sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        return self

    def __exit__(self, *exc):
        for proc in self.processes:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        sh("ip", "netns", "del", self.name, check=False)
        return False

    def sh(self, *cmd, check=True):
        return sh("ip", "netns", "exec", self.name, *cmd, check=check)

    def start(self, *cmd, log_path):
        """Starts a long-running program in the namespace (its own process group, killed at
        exit); its output goes to log_path."""
        log = open(log_path, "w")
        proc = subprocess.Popen(["ip", "netns", "exec", self.name, *cmd], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(proc)
        return proc

    def veth(self, name, peer, mtu=1500):
        self.sh("ip", "link", "add", name, "type", "veth", "peer", "name", peer)
        for dev in (name, peer):
            self.sh("ip", "link", "set", dev, "mtu", str(mtu), "up")

    def link_rx_packets(self, dev):
        out = self.sh("ip", "-s", "-j", "link", "show", dev).stdout
        return json.loads(out)[0]["stats64"]["rx"]["packets"]

    def qdisc_stats(self, dev):
        """The root qdisc's counters: packets sent and dropped."""
        out = self.sh("tc", "-s", "-j", "qdisc", "show", "dev", dev).stdout
        root = json.loads(out)[0]
        return {"packets": root["packets"], "drops": root["drops"], "bytes": root["bytes"]}
