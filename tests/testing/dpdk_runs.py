"""Running etwire on DPDK devices from an end-to-end test: a machine where DPDK's EAL cannot start
at all skips the case (Skip, exit 77 in the scripts) with the EAL's own message; any other
failure is the test's."""

import subprocess


class Skip(Exception):
    """The case cannot run on this machine; the message says why."""


def run_dpdk_etwire(etwire, args, *, prefix=(), timeout=300, check=True):
    """Runs `etwire ARGS...` (after PREFIX, e.g. `ip netns exec NS`) and returns the process."""
    cmd = [*prefix, etwire, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if "EAL did not start" in proc.stderr:
        raise Skip("DPDK cannot initialise here: " + proc.stderr.strip().splitlines()[-1])
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    return proc
