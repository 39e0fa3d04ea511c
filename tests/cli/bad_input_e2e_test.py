#!/usr/bin/env python3
"""End-to-end tests of inputs that are not what a command expects, as a user hands them over.

    python3 tests/cli/bad_input_e2e_test.py --etwire build/release/etwire --source-dir . --case NAME

Cases:

  endless_inputs  An endless stream (/dev/zero, a FIFO fed forever) or an oversize file in place
                  of a configuration, a comm-group file (in a configuration or --comm-groups) or a
                  results directory's summary.json or CSV: each command ends with exit 2 and an
                  error naming the file and the limit, instead of reading forever.
  fifo_without_writer  A FIFO that no one writes in place of a configuration, a comm-group file,
                  an InfraGraph file or a summary.json: exit 2 at once, naming it, instead of
                  waiting in its open for a writer that never comes.
  symlink_loops   A symlink loop where a trace set, a results directory or one of its files is
                  looked for: inspect, validate, run, report and compare end with exit 2 and an
                  error naming the loop. A loop beside a trace set, not named as a rank file, is
                  ignored like any other file.
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

# Every command here ends in well under a second; the timeout only turns a hang into a failure.
HANG = 120


def etwire(args, *command, cwd=None):
    return subprocess.run([args.etwire, *command], capture_output=True, text=True, timeout=HANG,
                          cwd=cwd)


def expect_bad_input(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr[-2000:])


def demo_config_with(args, work, name, extra_job_lines):
    """configs/loopback-demo.yaml with its trace path made absolute and lines added to its job."""
    src = os.path.join(args.source_dir, "configs/loopback-demo.yaml")
    traces = os.path.join(args.source_dir, "configs/traces")
    with open(src) as f:
        text = f.read().replace("trace: traces/", f"trace: {traces}/")
    marker = "      trace: "
    at = text.index("\n", text.index(marker)) + 1
    text = text[:at] + "".join(f"      {line}\n" for line in extra_job_lines) + text[at:]
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def case_endless_inputs(args, work):
    config_limit = "larger than 64 MiB, the limit for a configuration file"
    endless = "(an endless stream such as /dev/zero?)"
    for command in ("validate", "run", "plan"):
        expect_bad_input(etwire(args, command, "/dev/zero", "--no-metrics")
                         if command == "run" else etwire(args, command, "/dev/zero"),
                         f"/dev/zero: {config_limit} {endless}")

    # A FIFO whose writer never stops, as `etwire validate <(yes)` would give it. Held open
    # here (reading and writing) so that it has a writer before etwire opens it, whenever the
    # shell gets to open it: etwire refuses a FIFO no one writes.
    fifo = os.path.join(work, "config.fifo")
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDWR)
    writer = subprocess.Popen(["sh", "-c", f"yes 'run: {{}}' > '{fifo}'"],
                              stderr=subprocess.DEVNULL)
    try:
        expect_bad_input(etwire(args, "validate", fifo), f"{fifo}: {config_limit} {endless}")
    finally:
        os.close(held)
        writer.kill()
        writer.wait()

    # An oversize regular file is refused before it is read (sparse: nothing is written).
    big = os.path.join(work, "big.yaml")
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)
    expect_bad_input(etwire(args, "validate", big), f"{big}: 67108865 bytes: {config_limit}")

    groups_limit = "larger than 64 MiB, the limit for a comm-group file"
    config = demo_config_with(args, work, "groups.yaml", ["comm_groups: /dev/zero"])
    out = os.path.join(work, "out")
    for command in (["validate"], ["run", "--out", out, "--no-metrics"]):
        expect_bad_input(etwire(args, *command, config),
                         "workload.jobs[0].comm_groups: /dev/zero: " + groups_limit)
    assert not os.path.exists(out), "a run that never started wrote results"
    trace = os.path.join(args.source_dir, "configs/traces/allreduce_8r/allreduce")
    for command in ("inspect", "feed"):
        expect_bad_input(etwire(args, command, "--comm-groups", "/dev/zero", trace),
                         f"/dev/zero: {groups_limit} {endless}")

    # A results directory whose files never end: report and compare stop at their caps.
    results = os.path.join(work, "results")
    proc = etwire(args, "run", os.path.join(args.source_dir, "configs/loopback-demo.yaml"),
                  "--out", results, "--no-metrics", "--no-progress",
                  "--set", "workload.iterations=1", "--set", "workload.warmup_iterations=0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    endless_flows = os.path.join(work, "endless-flows")
    shutil.copytree(results, endless_flows)
    os.remove(os.path.join(endless_flows, "flows.csv"))
    os.symlink("/dev/zero", os.path.join(endless_flows, "flows.csv"))
    expect_bad_input(etwire(args, "report", endless_flows, "-o", os.path.join(work, "r.html")),
                     "flows.csv:1: a line longer than 1 MiB: not a results file")
    # A summary.json of more than its 64 MiB cap (sparse, so that the test reads and writes
    # nothing of it; /dev/zero would hold the whole cap before it stops the read).
    big_summary = os.path.join(work, "big-summary")
    shutil.copytree(results, big_summary)
    with open(os.path.join(big_summary, "summary.json"), "wb") as f:
        f.truncate((64 << 20) + 1)
    summary_limit = "summary.json: 67108865 bytes: larger than 64 MiB, the limit for a summary.json"
    expect_bad_input(etwire(args, "report", big_summary, "-o", os.path.join(work, "r.html")),
                     summary_limit)
    expect_bad_input(etwire(args, "compare", results, big_summary), summary_limit)
    return "configuration, comm-group file, summary.json and CSV stop at their limits"


def case_fifo_without_writer(args, work):
    fifo = os.path.join(work, "nobody-writes")
    os.mkfifo(fifo)
    no_writer = "a FIFO with no writer: nothing would ever come to read"
    expect_bad_input(etwire(args, "validate", fifo), f"{fifo}: {no_writer}")
    config = demo_config_with(args, work, "groups.yaml", [f"comm_groups: {fifo}"])
    expect_bad_input(etwire(args, "validate", config),
                     f"workload.jobs[0].comm_groups: {fifo}: {no_writer}")
    trace = os.path.join(args.source_dir, "configs/traces/allreduce_8r/allreduce")
    expect_bad_input(etwire(args, "inspect", "--comm-groups", fifo, trace), f"{fifo}: {no_writer}")
    graph = demo_config_with(args, work, "graph.yaml", [])
    with open(graph) as f:
        text = f.read()
    fabric = text[text.index("\nfabric:\n"):]
    with open(graph, "w") as f:
        f.write(text.replace(fabric, f"\nfabric:\n  infragraph: {fifo}\n"))
    expect_bad_input(etwire(args, "validate", graph),
                     f"cannot read the InfraGraph file {fifo}: {no_writer}")
    results = os.path.join(work, "results")
    os.mkdir(results)
    os.mkfifo(os.path.join(results, "summary.json"))
    summary = os.path.join(results, "summary.json")
    expect_bad_input(etwire(args, "report", results, "-o", os.path.join(work, "r.html")),
                     f"{summary}: {no_writer}")
    expect_bad_input(etwire(args, "compare", results, results), f"{summary}: {no_writer}")
    return "configuration, comm-group file, InfraGraph file and summary.json: refused at once"


def case_symlink_loops(args, work):
    traces = os.path.join(work, "traces")
    shutil.copytree(os.path.join(args.source_dir, "configs/traces/allreduce_8r"), traces)
    os.symlink("loop", os.path.join(traces, "loop"))
    proc = etwire(args, "inspect", traces)
    assert proc.returncode == 0, proc.stderr[-2000:]

    loop_message = "not readable: Too many levels of symbolic links"
    rank_file = os.path.join(traces, "allreduce.8.et")
    os.symlink("allreduce.8.et", rank_file)
    expect_bad_input(etwire(args, "inspect", traces), f"{rank_file}: {loop_message}")
    expect_bad_input(etwire(args, "feed", os.path.join(traces, "allreduce")),
                     f"{rank_file}: {loop_message}")
    config = demo_config_with(args, work, "loop.yaml", [])
    with open(config) as f:
        text = f.read()
    trace_line = next(line for line in text.splitlines() if line.startswith("      trace: "))
    with open(config, "w") as f:
        f.write(text.replace(trace_line, f"      trace: {traces}"))
    out = os.path.join(work, "out")
    for command in (["validate"], ["run", "--out", out, "--no-metrics"]):
        expect_bad_input(etwire(args, *command, config),
                         f"workload.jobs[0].trace: cannot open the trace set: {rank_file}: "
                         f"{loop_message}")
    assert not os.path.exists(out), "a run that never started wrote results"
    expect_bad_input(etwire(args, "inspect", os.path.join(traces, "loop")),
                     f"{os.path.join(traces, 'loop')}: {loop_message}")

    results = os.path.join(work, "results")
    proc = etwire(args, "run", os.path.join(args.source_dir, "configs/loopback-demo.yaml"),
                  "--out", results, "--no-metrics", "--no-progress",
                  "--set", "workload.iterations=1", "--set", "workload.warmup_iterations=0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ports = os.path.join(results, "ports.csv")
    os.remove(ports)
    os.symlink("ports.csv", ports)
    expect_bad_input(etwire(args, "report", results, "-o", os.path.join(work, "r.html")),
                     f"{ports}: {loop_message}")
    looped = os.path.join(work, "looped-results")
    os.symlink("looped-results", looped)
    expect_bad_input(etwire(args, "report", looped), f"{looped}: {loop_message}")
    expect_bad_input(etwire(args, "compare", results, looped), f"{looped}: {loop_message}")
    return "inspect, feed, validate, run, report and compare name the loop"


CASES = {"endless_inputs": case_endless_inputs, "fifo_without_writer": case_fifo_without_writer,
         "symlink_loops": case_symlink_loops}


def main():
    return run_case(CASES, "bad-input")


if __name__ == "__main__":
    sys.exit(main())
