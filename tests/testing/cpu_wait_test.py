"""Checks cpu_wait.py, which the device cases hold their timing bounds against: a thread that
shares its CPU with a spinner is measured waiting, the threads that wake now and then are left
out, and the bound stretches as the docstring says. Exit 0 when every check holds."""

import os
import subprocess
import sys

from cpu_wait import CpuWait, run_measuring_cpu_wait

# About half a second of CPU time in one thread, then a second thread that sleeps.
BUSY = """
import threading, time
threading.Thread(target=lambda: time.sleep(0.3)).start()
end = time.process_time() + 0.5
while time.process_time() < end:
    pass
"""


def check_spinner_on_the_same_cpu():
    cpu = str(min(os.sched_getaffinity(0)))
    spinner = subprocess.Popen(["taskset", "-c", cpu, sys.executable, "-c", "while True: pass"])
    try:
        proc, cpu_wait = run_measuring_cpu_wait(
            ["taskset", "-c", cpu, sys.executable, "-c", BUSY], timeout=120)
    finally:
        spinner.kill()
        spinner.wait()
    assert proc.returncode == 0, proc.stderr
    print(f"beside a spinner on CPU {cpu}: {cpu_wait}")
    # Sharing one CPU with a spinner at the same priority, the busy thread waits about as long
    # as it runs; more load on the machine can only make it wait longer.
    assert cpu_wait.threads == 1, cpu_wait.threads
    assert cpu_wait.on_cpu_s >= 0.4, cpu_wait.on_cpu_s
    assert cpu_wait.waiting_share() >= 0.3, cpu_wait.waiting_share()


def check_the_arithmetic():
    both = CpuWait([(1.0, 1.0), (0.05, 3.0)])  # a poller and a thread that mostly sleeps
    assert both.threads == 1 and both.waiting_share() == 0.5, str(both)
    assert both.stretched(2.5) == 5.0, both.stretched(2.5)
    assert both.stretched(2.5, power=2) == 10.0, both.stretched(2.5, power=2)
    assert abs(CpuWait([(1.0, 99.0)]).stretched(2.5) - 50.0) < 1e-9  # w capped at 0.95
    nothing = CpuWait([])
    assert nothing.waiting_share() == 0.0 and nothing.stretched(2.5) == 2.5


if __name__ == "__main__":
    check_the_arithmetic()
    check_spinner_on_the_same_cpu()
    print("ok")
