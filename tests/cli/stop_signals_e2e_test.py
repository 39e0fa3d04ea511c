#!/usr/bin/env python3
"""End-to-end tests of the signals that stop `etwire run` (cli/stop_signals.h), sent as early as
a process can get them.

    python3 tests/cli/stop_signals_e2e_test.py --etwire build/release/etwire --source-dir . \\
        --case NAME

Cases:

  at_start      The bundled default run gets SIGHUP, or SIGTERM, the moment its handlers are in
                place (the first thing etwire does): exit 130 and a summary.json with status
                interrupted, as for a signal in the middle of the run.
  during_load   The configuration is a FIFO, so the run is provably still reading it when the
                signal comes: SIGHUP, then SIGTERM, each ends the run with exit 130 and a summary
                of nothing done (status interrupted, no flows, no iterations).
  ignored_sigint  Started with SIGINT ignored (a background job of a script): SIGINT stays
                ignored, as POSIX has it, while SIGTERM and SIGHUP are caught; SIGTERM stops the
                run with exit 130 and its summary.
  other_commands  Any command but run ends on these signals as a process does by default:
                validate, blocked reading a FIFO, is killed by SIGTERM and by SIGHUP.
  before_libraries  The handlers are in place before any shared library's static initialiser
                runs (DPDK's, protobuf's): a preloaded probe library finds SIGTERM caught.
  right_after_spawn  SIGINT, SIGTERM or SIGHUP sent the moment the process exists, and after
                short waits: the run ends killed by the signal (it came while the process was
                still being loaded, before the handlers) with no results directory, or with exit
                130 and a summary of what was done; never a results directory without its
                summary.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
EXIT_INTERRUPTED = 130
# Generous bounds that only turn a hang into a failure; nothing here is timed.
HANG = 300


def signal_mask(pid, field):
    """The set of signals in /proc/<pid>/status's field (SigCgt: caught, SigIgn: ignored)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                bits = int(line.split()[1], 16)
                return {n for n in range(1, 65) if bits & (1 << (n - 1))}
    return set()


def wait_until(condition, proc, what):
    deadline = time.monotonic() + HANG
    while not condition():
        assert proc.poll() is None, f"etwire ended ({proc.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} within {HANG} s"
        time.sleep(0.001)


def caught(proc, sig):
    """Whether etwire has its handler for `sig` in place (False until it has exec'd)."""
    try:
        return sig in signal_mask(proc.pid, "SigCgt")
    except FileNotFoundError:
        return False


def start_run(args, config, out, preexec_fn=None):
    return subprocess.Popen(
        [args.etwire, "run", config, "--out", out, "--no-metrics", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)


def expect_interrupted(proc, out):
    stdout, stderr = proc.communicate(timeout=HANG)
    assert proc.returncode == EXIT_INTERRUPTED, (proc.returncode, stderr[-2000:])
    assert "Status interrupted" in stdout, stdout[-2000:]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    assert summary["status"] == "interrupted", summary["status"]
    return summary


def demo_config_text(args):
    """configs/loopback-demo.yaml with its trace path made absolute, to be read from anywhere."""
    with open(os.path.join(args.source_dir, "configs/loopback-demo.yaml")) as f:
        text = f.read()
    return text.replace("trace: traces/", f"trace: {args.source_dir}/configs/traces/")


def fifo_with_writer(fifo):
    """A writing end of the FIFO, held before etwire opens it: etwire refuses a FIFO that no one
    writes rather than wait for a writer. Opened for reading and writing, which never waits on
    Linux; the reading end it also holds is never read."""
    return os.open(fifo, os.O_RDWR)


def wait_for_reader(fifo, proc):
    """Until etwire holds the FIFO open: it then waits in its read, for the configuration."""
    fds = f"/proc/{proc.pid}/fd"

    def holds_it():
        try:
            return any(os.readlink(os.path.join(fds, fd)) == fifo for fd in os.listdir(fds))
        except OSError:  # an fd closed while listed, or etwire not exec'd yet
            return False

    wait_until(holds_it, proc, f"etwire opening {fifo}")


def case_at_start(args, work):
    config = os.path.join(args.source_dir, "configs/loopback-demo.yaml")
    done = []
    for sig in (signal.SIGHUP, signal.SIGTERM):
        out = os.path.join(work, sig.name)
        proc = start_run(args, config, out)
        wait_until(lambda: caught(proc, sig), proc, f"a handler for {sig.name}")
        proc.send_signal(sig)
        summary = expect_interrupted(proc, out)
        done.append(f"{sig.name}: {summary['flows']} flows")
    return ", ".join(done)


def case_during_load(args, work):
    text = demo_config_text(args).encode()
    for sig in (signal.SIGHUP, signal.SIGTERM):
        fifo = os.path.join(work, f"{sig.name}.yaml")
        os.mkfifo(fifo)
        out = os.path.join(work, sig.name)
        fd = fifo_with_writer(fifo)
        proc = start_run(args, fifo, out)
        wait_for_reader(fifo, proc)
        # etwire is inside the configuration's read: nothing is set up yet.
        proc.send_signal(sig)
        os.write(fd, text)
        os.close(fd)
        summary = expect_interrupted(proc, out)
        assert summary["flows"] == 0, summary["flows"]
        assert summary["iterations"] == [], summary["iterations"]
    return "SIGHUP and SIGTERM while the configuration loads end the run with its summary"


def case_ignored_sigint(args, work):
    out = os.path.join(work, "results")
    config = os.path.join(args.source_dir, "configs/loopback-demo.yaml")
    proc = start_run(args, config, out,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    # etwire installs its handlers in turn, SIGHUP's last (cli/stop_signals.cc): once that one is
    # in place, SIGINT's fate is settled.
    wait_until(lambda: caught(proc, signal.SIGHUP), proc, "a handler for SIGHUP")
    assert signal.SIGTERM in signal_mask(proc.pid, "SigCgt")
    assert signal.SIGINT in signal_mask(proc.pid, "SigIgn"), "SIGINT is no longer ignored"
    assert signal.SIGINT not in signal_mask(proc.pid, "SigCgt")
    proc.send_signal(signal.SIGTERM)
    expect_interrupted(proc, out)
    return "SIGINT stays ignored; SIGTERM stops the run"


def case_other_commands(args, work):
    for sig in (signal.SIGTERM, signal.SIGHUP):
        fifo = os.path.join(work, f"{sig.name}.yaml")
        os.mkfifo(fifo)
        fd = fifo_with_writer(fifo)
        proc = subprocess.Popen([args.etwire, "validate", fifo], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        wait_for_reader(fifo, proc)
        proc.send_signal(sig)
        proc.communicate(timeout=HANG)
        os.close(fd)
        assert proc.returncode == -sig, (sig.name, proc.returncode)
    return "validate is ended by SIGTERM and SIGHUP"


def case_before_libraries(args, work):
    report = os.path.join(work, "probe")
    env = dict(os.environ, LD_PRELOAD=args.probe, ETWIRE_STOP_PROBE=report,
               # An ASan build wants its runtime first among the libraries; the probe comes first.
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    proc = subprocess.run([args.etwire, "--version"], capture_output=True, text=True,
                          timeout=HANG, env=env)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    with open(report) as f:
        seen = f.read().strip()
    assert seen == "caught", f"a library initialiser found SIGTERM {seen or 'unreported'}"
    return "SIGTERM is caught before the libraries' static initialisers run"


def case_right_after_spawn(args, work):
    config = os.path.join(args.source_dir, "configs/loopback-demo.yaml")
    ends = {}
    # The waits spread the signals over the process's start: loading, then the handlers in place.
    for attempt, delay in enumerate([0, 0, 0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05]):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            out = os.path.join(work, f"{sig.name}-{attempt}")
            proc = start_run(args, config, out)
            if delay:
                time.sleep(delay)
            proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=HANG)
            if proc.returncode == -sig:
                assert not os.path.exists(out), (sig.name, delay, os.listdir(out))
            elif proc.returncode == 0:
                # The run had ended before the signal came (the demo takes tens of milliseconds
                # on a quiet machine): its results are whole.
                with open(os.path.join(out, "summary.json")) as f:
                    assert json.load(f)["status"] == "completed"
            else:
                assert proc.returncode == EXIT_INTERRUPTED, (sig.name, proc.returncode,
                                                              stderr[-2000:])
                with open(os.path.join(out, "summary.json")) as f:
                    assert json.load(f)["status"] == "interrupted"
            ends[proc.returncode] = ends.get(proc.returncode, 0) + 1
    return "exit codes seen: " + ", ".join(f"{code} x{n}" for code, n in sorted(ends.items()))


CASES = {
    "at_start": case_at_start,
    "during_load": case_during_load,
    "ignored_sigint": case_ignored_sigint,
    "other_commands": case_other_commands,
    "before_libraries": case_before_libraries,
    "right_after_spawn": case_right_after_spawn,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    parser.add_argument("--probe", help="the preloaded probe library (case before_libraries)")
    args = parser.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
    if not os.path.exists("/proc/self/status"):
        print("skipped: no /proc to see the process's signal handlers")
        return SKIP
    work = tempfile.mkdtemp(prefix=f"etwire-stop-signals-{args.case}-")
    try:
        print(f"{args.case}: {CASES[args.case](args, work)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
