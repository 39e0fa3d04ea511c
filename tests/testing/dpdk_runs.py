"""Running etwire on DPDK devices from an end-to-end test: a machine where DPDK's EAL cannot start
at all skips the case (Skip, exit 77 in the scripts) with the EAL's own message; any other
failure is the test's."""

import subprocess

from cpu_wait import run_measuring_cpu_wait


class Skip(Exception):
    """The case cannot run on this machine; the message says why."""


def run_dpdk_etwire(etwire, args, *, prefix=(), timeout=300, check=True, measure_cpu=False):
    """Runs `etwire ARGS...` (after PREFIX, e.g. `ip netns exec NS`) and returns the process;
    with MEASURE_CPU its cpu_wait says how long etwire's threads waited for a CPU (cpu_wait.py)."""
    cmd = [*prefix, etwire, *args]
    if measure_cpu:
        proc, cpu = run_measuring_cpu_wait(cmd, timeout=timeout)
        proc.cpu_wait = cpu
    else:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if "EAL did not start" in proc.stderr:
        raise Skip("DPDK cannot initialise here: " + proc.stderr.strip().splitlines()[-1])
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    return proc
