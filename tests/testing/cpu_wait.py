"""How long a process's threads waited for a CPU while it ran, measured from the kernel's
scheduler statistics (/proc/PID/task/TID/schedstat: time on a CPU, time runnable but waiting
for one). A test on the wall clock holds its timing against what the machine gave the process
under test, measured in the same run, rather than against a constant (docs/reliability.md,
"A busy machine")."""

import glob
import subprocess
import tempfile
import time

# Between two samples a thread that ends takes its last interval with it: short, against runs
# of seconds.
SAMPLE_S = 0.05


class CpuWait:
    """The schedstat times of a process's busy threads, summed: on_cpu_s and waiting_s. Busy
    threads are those that took at least a tenth of the process's CPU time: etwire's pollers,
    which busy-poll, and not the threads that wake now and then (a capture writer, telemetry),
    whose waits do not hold a packet back."""

    BUSY_SHARE = 0.1

    def __init__(self, threads):
        """THREADS: (on_cpu_s, waiting_s) of each thread of the process."""
        total = sum(on_cpu for on_cpu, _ in threads)
        busy = [t for t in threads if t[0] >= self.BUSY_SHARE * total] if total > 0 else []
        self.threads = len(busy)
        self.on_cpu_s = sum(on_cpu for on_cpu, _ in busy)
        self.waiting_s = sum(waiting for _, waiting in busy)

    def waiting_share(self):
        """The share of their runnable time the busy threads spent waiting for a CPU (0 when
        they never ran, or the kernel keeps no scheduler statistics)."""
        runnable = self.on_cpu_s + self.waiting_s
        return self.waiting_s / runnable if runnable > 0 else 0.0

    def stretched(self, ratio, power=1):
        """RATIO, a bound on how much longer than predicted a run may take when it has its CPUs,
        for this run: threads that waited a share w of their runnable time did their work in
        1 / (1 - w) of the time they would have, so the bound is RATIO / (1 - w) ** POWER, w at
        most 0.95. POWER 2 where the waiting also adds work in proportion: a receiver that polls
        late lets the go-back-N senders send that much more past a loss."""
        return ratio / (1 - min(self.waiting_share(), 0.95)) ** power

    def __str__(self):
        return (f"{self.threads} busy thread(s): {self.on_cpu_s:.2f} s on a CPU, "
                f"{self.waiting_s:.2f} s waiting for one ({100 * self.waiting_share():.0f} % of "
                f"their runnable time)")


def _threads(pid):
    """{schedstat path: (on_cpu_ns, waiting_ns)} of the process's live threads."""
    found = {}
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                on_cpu, waiting = f.read().split()[:2]
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
        found[path] = (int(on_cpu), int(waiting))
    return found


def run_measuring_cpu_wait(cmd, *, timeout):
    """Runs CMD (a command that execs the measured program in its own process, as `ip netns exec`
    does) to its end, sampling its threads' schedstat. Returns (CompletedProcess with text
    stdout/stderr, CpuWait)."""
    # Files, not pipes: a pipe nobody reads while sampling would fill and stop the process.
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        last = {}
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            last.update(_threads(proc.pid))
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise subprocess.TimeoutExpired(cmd, timeout)
            time.sleep(SAMPLE_S)
        out.seek(0)
        err.seek(0)
        completed = subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read())
    return completed, CpuWait([(on_cpu / 1e9, waiting / 1e9) for on_cpu, waiting in last.values()])
