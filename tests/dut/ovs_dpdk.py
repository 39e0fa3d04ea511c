"""Open vSwitch with its DPDK datapath (the userspace `netdev` datapath, one PMD thread) switching
between etwire's net_memif ports.

    etwire port i (net_memif client)  --memif socket i--  OVS port p<i> (type=dpdk, memif server)

ovsdb-server and ovs-vswitchd-dpdk run in the test's own network namespace (memif sockets are
abstract unix sockets by default: the namespace keeps them private) with every state directory in
a temporary directory of the test (OVS_RUNDIR, OVS_DBDIR, OVS_LOGDIR, OVS_SYSCONFDIR): nothing
system-wide is read or written. The daemons die with the namespace (netns.Namespace.start) and the
state directory is removed, whatever the case did.

OVS's PMD thread busy-polls its core: `pmd_cpus` pins it (other_config:pmd-cpu-mask), and the
whole daemon is started under `taskset` on the same CPUs, so etwire's lcores can be kept off them.

Forwarding is by explicit flows, in_port -> output, one per direction (`cross_connect`): no
learning, no flooding, so every frame a port receives from etwire goes to exactly one other port.
"""

import os
import re
import shutil
import subprocess
import tempfile
import time

from netns import DeviceUnavailable, settled

VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"


def log_tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:]).strip()
    except OSError:
        return f"(no log at {path})"


class DeviceCrashed(RuntimeError):
    """ovs-vswitchd-dpdk died of a signal (`signal`) while the case used it."""

    def __init__(self, signal, message):
        super().__init__(message)
        self.signal = signal


class OvsDpdk:
    """`with OvsDpdk(ns, ports=2) as ovs:` starts OVS in namespace `ns` with memif server ports
    p0 .. p<ports-1>; `ovs.socket(i)` is where etwire's client i connects."""

    def __init__(self, ns, ports=2, *, pmd_cpus=(1,), n_rxq=2, memory_mb=1024, rsize=14,
                 bsize=8192, pmd_maxsleep_us=0, ready_timeout_s=60):
        self.ns = ns
        self.ports = ports
        self.pmd_cpus = pmd_cpus
        self.n_rxq = n_rxq
        self.pmd_maxsleep_us = pmd_maxsleep_us
        self.memory_mb = memory_mb
        self.rsize, self.bsize = rsize, bsize
        self.ready_timeout_s = ready_timeout_s
        self.dir = None
        self.env = None
        self.vswitchd = None

    # -- paths and commands ---------------------------------------------------------------------

    def socket(self, i):
        return os.path.join(self.dir, f"memif{i}.sock")

    def port(self, i):
        return f"p{i}"

    def _env(self):
        return {"OVS_RUNDIR": self.run, "OVS_DBDIR": self.db_dir, "OVS_LOGDIR": self.log_dir,
                "OVS_SYSCONFDIR": self.etc, "OVS_PKGDATADIR": "/usr/share/openvswitch"}

    def _cmd(self, *cmd, check=True, timeout=30):
        """Runs an OVS client in the namespace with the test's own state directories."""
        env_args = [f"{k}={v}" for k, v in self.env.items()]
        proc = self.ns.sh("env", *env_args, "timeout", str(timeout), *cmd, check=False)
        if check and proc.returncode != 0:
            signal = self.crash_signal()  # first: it waits for a daemon still going down
            message = (f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}\n"
                       f"{self.vswitchd_state()}\nvswitchd log:\n{self.vswitchd_log()}")
            raise DeviceCrashed(signal, message) if signal else RuntimeError(message)
        return proc

    def vsctl(self, *args, check=True, timeout=30):
        return self._cmd("ovs-vsctl", f"--timeout={timeout}", *args, check=check,
                         timeout=timeout + 5)

    def ofctl(self, *args, check=True):
        return self._cmd("ovs-ofctl", "-O", "OpenFlow13", *args, check=check)

    def vswitchd_log(self, lines=15):
        return log_tail(os.path.join(self.log_dir, "ovs-vswitchd.log"), lines)

    def crash_signal(self, wait_s=10.0):
        """The signal that ended ovs-vswitchd-dpdk, or None while it runs (or if it exited).
        Waits up to wait_s for a daemon that is still ending: one that crashed with its client
        connections already refused may still be writing its core."""
        if self.vswitchd is None:
            return None
        try:
            code = self.vswitchd.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None
        return -code if code < 0 else None

    def vswitchd_state(self):
        """Whether the daemon still runs, and if not how it ended, with what it printed and what
        the kernel logged of it: Debian's build has no libunwind, so a crash leaves no trace in
        its own log."""
        if self.vswitchd is None:
            return "ovs-vswitchd-dpdk was not started"
        code = self.vswitchd.poll()
        if code is None:
            return "ovs-vswitchd-dpdk is running"
        how = f"killed by signal {-code}" if code < 0 else f"exited {code}"
        kernel = subprocess.run(["dmesg"], capture_output=True, text=True)
        lines = [line for line in kernel.stdout.splitlines()
                 if re.search(r"segfault|general protection|oom-kill|Killed process", line)]
        return (f"ovs-vswitchd-dpdk {how}; its output:\n"
                f"{log_tail(os.path.join(self.log_dir, 'ovs-vswitchd.out'))}\n"
                f"the kernel's last faults and kills (any process):\n" +
                ("\n".join(lines[-5:]) or kernel.stderr.strip() or "(none)"))

    def _start(self, name, *cmd):
        env_args = [f"{k}={v}" for k, v in self.env.items()]
        cpus = ",".join(str(c) for c in self.pmd_cpus)
        return self.ns.start("env", *env_args, "taskset", "-c", cpus, *cmd,
                             log_path=os.path.join(self.log_dir, f"{name}.out"))

    # -- life cycle -----------------------------------------------------------------------------

    def __enter__(self):
        for path in (VSWITCHD, SCHEMA):
            if not os.path.exists(path):
                raise DeviceUnavailable(f"{path} not found (package openvswitch-switch-dpdk)")
        self.dir = tempfile.mkdtemp(prefix="etwire-ovs-")
        self.run, self.db_dir, self.log_dir, self.etc = (
            os.path.join(self.dir, d) for d in ("run", "db", "log", "etc"))
        for d in (self.run, self.db_dir, self.log_dir, self.etc):
            os.makedirs(d)
        self.env = self._env()
        try:
            self._bring_up()
        except BaseException:
            self._tear_down()
            raise
        return self

    def _bring_up(self):
        db = os.path.join(self.db_dir, "conf.db")
        self._cmd("ovsdb-tool", "create", db, SCHEMA)
        sock = os.path.join(self.run, "db.sock")
        server = self._start("ovsdb-server", "ovsdb-server", db, f"--remote=punix:{sock}",
                             f"--pidfile={self.run}/ovsdb-server.pid",
                             f"--log-file={self.log_dir}/ovsdb-server.log")
        self._wait_for(lambda: os.path.exists(sock), server, "ovsdb-server", "ovsdb-server.log")
        self.vsctl("--no-wait", "init")
        mask = hex(sum(1 << c for c in self.pmd_cpus))
        prefix = f"ovs-etwire-{os.getpid()}"
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".", "other_config:dpdk-init=true",
                   f'other_config:dpdk-extra="--no-huge -m {self.memory_mb} --no-pci '
                   f'--legacy-mem --file-prefix={prefix}"',
                   f"other_config:pmd-cpu-mask={mask}",
                   # OVS 3.1's PMD may sleep up to this long when its queues are idle (0: it
                   # busy-polls), leaving the CPU to what else runs there.
                   f"other_config:pmd-maxsleep={self.pmd_maxsleep_us}")
        self.vswitchd = self._start("ovs-vswitchd", VSWITCHD, f"unix:{sock}",
                                    f"--pidfile={self.run}/ovs-vswitchd.pid",
                                    f"--log-file={self.log_dir}/ovs-vswitchd.log")
        # DPDK comes up (or fails) before the daemon answers on its database.
        deadline = time.monotonic() + self.ready_timeout_s
        while True:
            if self.vswitchd.poll() is not None:
                raise DeviceUnavailable(f"ovs-vswitchd-dpdk exited {self.vswitchd.returncode}: "
                                        f"{self._daemon_errors()}")
            out = self.vsctl("--no-wait", "get", "Open_vSwitch", ".", "dpdk_initialized",
                             check=False).stdout.strip()
            if out == "true":
                break
            if time.monotonic() > deadline:
                raise DeviceUnavailable(f"DPDK not initialised in {self.ready_timeout_s} s: "
                                        f"{self._daemon_errors()}")
            time.sleep(0.2)
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
                   "fail_mode=secure", "protocols=OpenFlow13")
        for i in range(self.ports):
            devargs = (f"net_memif{i},role=server,id=0,socket={self.socket(i)},"
                       f"rsize={self.rsize},bsize={self.bsize}")
            self.vsctl("add-port", "br0", self.port(i), "--", "set", "Interface", self.port(i),
                       "type=dpdk", f'options:dpdk-devargs="{devargs}"',
                       f"options:n_rxq={self.n_rxq}", f"ofport_request={i + 1}")
        for i in range(self.ports):
            err = self.vsctl("get", "Interface", self.port(i), "error", check=False).stdout.strip()
            if err and err != "[]":
                raise DeviceUnavailable(f"port {self.port(i)}: {err}: {self._daemon_errors()}")
        self.ofctl("del-flows", "br0")

    def _wait_for(self, ready, proc, name, log, at_most_s=10):
        deadline = time.monotonic() + at_most_s
        while not ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise DeviceUnavailable(f"{name} did not start: "
                                        f"{log_tail(os.path.join(self.log_dir, log))} "
                                        f"{log_tail(os.path.join(self.log_dir, name + '.out'))}")
            time.sleep(0.05)

    def _daemon_errors(self):
        """The daemon's own complaints: its log's error lines, else its last lines."""
        text = log_tail(os.path.join(self.log_dir, "ovs-vswitchd.log"), 200)
        errors = [line for line in text.splitlines() if re.search(r"\|(ERR|EMER|WARN)\|", line)]
        out = log_tail(os.path.join(self.log_dir, "ovs-vswitchd.out"), 5)
        return "\n".join(errors[-8:]) or text[-2000:] or out

    def __exit__(self, *exc):
        self._tear_down()
        return False

    def _tear_down(self):
        for proc in list(self.ns.processes):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, 9)
                except ProcessLookupError:
                    pass
                proc.wait()
        if self.dir:
            if os.environ.get("ETWIRE_DUT_KEEP_OVS"):
                print(f"  kept OVS state in {self.dir}")
            else:
                shutil.rmtree(self.dir, ignore_errors=True)

    # -- flows and counters ---------------------------------------------------------------------

    def add_flow(self, rule):
        self.ofctl("add-flow", "br0", rule)

    def cross_connect(self, a=0, b=1, priority=10):
        """Every frame from port a goes out of port b and the other way round."""
        self.add_flow(f"priority={priority},in_port={a + 1},actions=output:{b + 1}")
        self.add_flow(f"priority={priority},in_port={b + 1},actions=output:{a + 1}")

    def port_counters(self):
        """Per OVS port: rx/tx packets, bytes, drops, errors (ovs-ofctl dump-ports). A memif
        port's packet and byte counters restart from 0 when its client disconnects (measured:
        both ports read 0 two seconds after etwire exited); the drops OVS counts itself
        (tx_dropped: ovs_tx_failure_drops and the like) stay."""
        out = self.ofctl("dump-ports", "br0").stdout
        counters = {}
        current = None
        for line in out.splitlines():
            m = re.match(r"\s*port\s+(\S+):\s*rx pkts=(\d+), bytes=(\d+), drop=(\d+), errs=(\d+)",
                         line)
            if m:
                current = m.group(1)
                if current == "LOCAL":
                    current = None
                    continue
                counters[int(current) - 1] = {
                    "rx_packets": int(m.group(2)), "rx_bytes": int(m.group(3)),
                    "rx_dropped": int(m.group(4)), "rx_errors": int(m.group(5))}
                continue
            m = re.match(r"\s*tx pkts=(\d+), bytes=(\d+), drop=(\d+), errs=(\d+)", line)
            if m and current is not None:
                counters[int(current) - 1].update({
                    "tx_packets": int(m.group(1)), "tx_bytes": int(m.group(2)),
                    "tx_dropped": int(m.group(3)), "tx_errors": int(m.group(4))})
        return counters

    def flow_counters(self):
        """Packets and bytes each flow matched, by its match text (ovs-ofctl dump-flows)."""
        out = self.ofctl("dump-flows", "br0").stdout
        flows = {}
        for line in out.splitlines():
            m = re.search(r"n_packets=(\d+), n_bytes=(\d+),.*?(priority=\S+)\s+actions=(\S+)",
                          line)
            if m:
                flows[f"{m.group(3)} actions={m.group(4)}"] = {
                    "packets": int(m.group(1)), "bytes": int(m.group(2))}
        return flows

    def interface_statistics(self, i):
        """OVS's own statistics of port i (Interface statistics column), among them why it
        dropped: ovs_tx_failure_drops (the memif ring was full), ovs_tx_mtu_exceeded_drops, ..."""
        out = self.vsctl("get", "Interface", self.port(i), "statistics").stdout.strip()
        return {k: int(v) for k, v in re.findall(r'"?([A-Za-z0-9_]+)"?=(\d+)', out)}

    def counters(self, quiet_s=1.5, at_most_s=15.0):
        """The flow counters once they have stopped moving (the revalidator folds the datapath's
        packet counts into the OpenFlow flows' every half second or so: read at once after a
        fast run, the last frames were missing from them), with the ports' counters and
        statistics read then."""
        flows = settled(self.flow_counters, quiet_s=quiet_s, at_most_s=at_most_s, poll_s=0.25,
                        what="OVS's flow counters")
        return {"ports": self.port_counters(), "flows": flows,
                "statistics": {i: self.interface_statistics(i) for i in range(self.ports)}}
