#!/usr/bin/env python3
"""End-to-end tests of a partitioned fabric twin (fabric.partitions, `etwire run --threads`).

    python3 tests/cli/partitions_e2e_test.py --etwire build/release/etwire --source-dir . --case NAME

Cases:

  same_on_any_cores  configs/twin-congestion.yaml cut into 4 partitions runs on 1 thread, on 2
                     threads, and on 2 threads held to one core by taskset. Every file it writes
                     is the same byte for byte (queues.csv among them, with rows of switch ports
                     of every partition, in time order), and summary.json the same but for the
                     wall-clock time. Without queue samples the flows and the event count are
                     the same.
  capture_on_any_cores  the same cut with telemetry.record.pcap, every port and both ends of a
                     cut cable (leaf1/spine0, spine0/leaf1) captured, on 1 thread and on 2: each
                     file holds the same frames with the same directions and virtual times on
                     both; the two ends of the cable hold the same frames; the ports' files hold
                     every frame summary.json says the ports moved; tshark decodes the cable's
                     two files and h0's without a malformed frame.
  threads_refused    --threads on a configuration of one partition is refused with a message
                     that says why, and nothing is written.
  same_over_processes  a cut of 4 partitions (cables of 5 us) spread over 2 and 3 processes of
                     mpirun (one thread each, and 2 processes of 2 threads) writes every file byte
                     for byte as one process on one thread and on two does (queues.csv, ports.csv
                     and qps.csv among them), and summary.json the same but for the wall-clock
                     time.
  processes_refused  under mpirun: more processes than partitions, a capture with the twin spread,
                     and a twin of one partition are refused by `run` and `validate` with messages
                     that say why and what to do, and nothing is written.
"""

import csv
import io
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402
from frame_checks import same_frames, tshark_fields  # noqa: E402

FILES = ["flows.csv", "collectives.csv", "ports.csv", "qps.csv", "queues.csv"]


def run(args, config, out, *extra, prefix=()):
    return subprocess.run([*prefix, args.etwire, "run", config, "--no-metrics", "--no-progress",
                           "--out", out, *extra], capture_output=True, text=True, timeout=300)


def without_wall_clock(value):
    """summary.json without the keys that measure the wall clock."""
    if isinstance(value, dict):
        return {k: without_wall_clock(v) for k, v in value.items() if k != "wall_seconds"}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value


def case_same_on_any_cores(args, work):
    config = os.path.join(args.source_dir, "configs/twin-congestion.yaml")
    cut = ["--set", "fabric.partitions=4"]
    runs = {
        "1 thread": ([], ["--threads", "1"]),
        "2 threads": ([], ["--threads", "2"]),
        "2 threads on one core": ([shutil.which("taskset"), "-c", "0"], ["--threads", "2"]),
    }
    outputs = {}
    for name, (prefix, threads) in runs.items():
        out = os.path.join(work, name.replace(" ", "-"))
        proc = run(args, config, out, *cut, *threads, prefix=prefix)
        assert proc.returncode == 0, (name, proc.returncode, proc.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        assert summary["status"] == "completed", (name, summary["status"])
        files = {}
        for file in FILES:
            with open(os.path.join(out, file), "rb") as f:
                files[file] = f.read()
        outputs[name] = (without_wall_clock(summary), files)
    first_summary, first_files = outputs["1 thread"]
    assert first_summary["flows"] > 10000, first_summary["flows"]
    queues = list(csv.DictReader(io.StringIO(first_files["queues.csv"].decode())))
    times = [int(row["time_ns"]) for row in queues]
    assert times == sorted(times), "queues.csv is not in time order"
    # Each leaf is a partition of its own; the spines are in partitions 0 and 2.
    switches = {row["switch_port"].split("/")[0] for row in queues}
    assert {"leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1"} <= switches, switches
    for name, (summary, files) in outputs.items():
        for file in FILES:
            assert files[file] == first_files[file], f"{file} differs on {name}"
        assert summary == first_summary, f"summary.json differs on {name}"
    # Sampling adds no event and changes nothing the run does.
    out = os.path.join(work, "no-queue-samples")
    proc = run(args, config, out, *cut, "--set", "telemetry.record.queue_sample_interval=0s")
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    with open(os.path.join(out, "summary.json")) as f:
        assert json.load(f)["run"]["events"] == first_summary["run"]["events"], "events differ"
    for file in ("flows.csv", "collectives.csv"):
        with open(os.path.join(out, file), "rb") as f:
            assert f.read() == first_files[file], f"{file} differs without queue samples"
    return (f"{first_summary['flows']} flows, {len(queues)} queue rows; {', '.join(FILES)} and "
            f"summary.json the same on {', '.join(outputs)}; the same flows and events without "
            f"queue samples")


def pcapng_packets(path):
    """Every enhanced packet block of a pcapng file etwire wrote (little-endian, nanosecond
    timestamps): (timestamp, original length, captured bytes, options: the direction flags), in
    file order."""
    with open(path, "rb") as f:
        data = f.read()
    packets, at = [], 0
    while at < len(data):
        kind, length = struct.unpack_from("<II", data, at)
        assert length >= 12 and at + length <= len(data), f"{path}: a bad block at byte {at}"
        if kind == 6:
            high, low, captured, original = struct.unpack_from("<IIII", data, at + 12)
            body = at + 28
            options = data[body + (captured + 3) // 4 * 4:at + length - 4]
            packets.append(((high << 32) | low, original, data[body:body + captured], options))
        at += length
    return packets


def capture_files(out):
    """Each capture file of a run, by its path under capture/: its packets with times counted from
    the run's earliest frame (the files' times are virtual times moved by the wall-clock start)."""
    folder = os.path.join(out, "capture")
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            files[os.path.relpath(path, folder)] = pcapng_packets(path)
    start = min(p[0][0] for p in files.values() if p)
    return {name: [(t - start, *rest) for t, *rest in packets] for name, packets in files.items()}


def case_capture_on_any_cores(args, work):
    config = os.path.join(args.source_dir, "configs/twin-congestion.yaml")
    # leaf1 is in partition 1 of 4, spine0 in partition 0.
    cut_cable = ["fabric/leaf1/spine0.pcapng", "fabric/spine0/leaf1.pcapng"]
    sets = ["fabric.partitions=4", "telemetry.record.pcap=true", "workload.iterations=1",
            "workload.warmup_iterations=0",
            "telemetry.capture.switch_ports=[leaf1/spine0, spine0/leaf1]"]
    captures = {}
    for threads in ("1", "2"):
        out = os.path.join(work, f"{threads}-threads")
        proc = run(args, config, out, *[a for s in sets for a in ("--set", s)], "--threads", threads)
        assert proc.returncode == 0, (threads, proc.returncode, proc.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        assert summary["status"] == "completed", (threads, summary["status"])
        captures[threads] = (out, summary, capture_files(out))
    out, summary, files = captures["1"]
    ports = {f"{p['name']}.pcapng" for p in summary["ports"]}
    assert set(files) == ports | set(cut_cable), sorted(files)
    for name, packets in files.items():
        assert packets, f"{name}: nothing captured"
        assert packets == captures["2"][2][name], f"capture/{name} differs on 2 threads"
    moved = sum(p["tx_packets"] + p["rx_packets"] for p in summary["ports"])
    in_files = sum(len(files[name]) for name in ports)
    assert in_files == moved, (in_files, moved, summary["notes"])
    capture = os.path.join(out, "capture")
    on_cable = same_frames(*(os.path.join(capture, name) for name in cut_cable))
    for name in cut_cable + ["h0.pcapng"]:
        rows = tshark_fields(os.path.join(capture, name), ["frame.number", "_ws.malformed"])
        assert len(rows) == len(files[name]), (name, len(rows), len(files[name]))
        assert all(malformed == "" for _, malformed in rows), f"{name}: a malformed frame"
    return (f"{len(files)} files, {in_files} frames at the ports and {on_cable} on the cut cable "
            f"leaf1-spine0; the same on 1 and 2 threads")


def case_threads_refused(args, work):
    out = os.path.join(work, "out")
    proc = run(args, os.path.join(args.source_dir, "configs/loopback-demo.yaml"), out,
               "--threads", "2")
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "fabric.partitions is 1" in proc.stderr, proc.stderr
    assert not os.path.exists(out), "something was written"
    return proc.stderr.strip().splitlines()[-1]


def mpirun(processes):
    return [shutil.which("mpirun"), "--allow-run-as-root", "--oversubscribe", "-np",
            str(processes)]


def run_outputs(out):
    """summary.json without the wall clock, and every file of FILES, of a run in `out`."""
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    files = {}
    for file in FILES + ["nodes.csv"]:
        with open(os.path.join(out, file), "rb") as f:
            files[file] = f.read()
    return without_wall_clock(summary), files


def case_same_over_processes(args, work):
    config = os.path.join(args.source_dir, "configs/twin-congestion.yaml")
    # Cables of 5 us: a fifth of the windows, each a round of MPI calls, which three processes on
    # two cores make slow.
    cut = ["--set", "fabric.partitions=4", "--set", "fabric.propagation_delay=5us"]
    runs = {
        "1 thread": ([], ["--threads", "1"]),
        "2 threads": ([], ["--threads", "2"]),
        "2 processes": (mpirun(2), ["--threads", "1"]),
        "3 processes": (mpirun(3), ["--threads", "1"]),
        "2 processes of 2 threads": (mpirun(2), ["--threads", "2"]),
    }
    outputs = {}
    for name, (prefix, threads) in runs.items():
        out = os.path.join(work, name.replace(" ", "-"))
        proc = run(args, config, out, *cut, *threads, prefix=prefix)
        assert proc.returncode == 0, (name, proc.returncode, proc.stderr)
        if prefix:
            processes = prefix[-1]
            assert f"4 partitions spread over {processes} processes" in proc.stderr, proc.stderr
        outputs[name] = run_outputs(out)
        assert outputs[name][0]["status"] == "completed", (name, outputs[name][0]["status"])
    first_summary, first_files = outputs["1 thread"]
    assert first_summary["flows"] > 10000, first_summary["flows"]
    assert first_files["queues.csv"].count(b"\n") > 100, "few queue samples"
    for name, (summary, files) in outputs.items():
        for file, content in files.items():
            assert content == first_files[file], f"{file} differs on {name}"
        assert summary == first_summary, f"summary.json differs on {name}"
    return (f"{first_summary['flows']} flows, {first_summary['run']['events']} events; every file "
            f"and summary.json the same on {', '.join(outputs)}")


def case_processes_refused(args, work):
    config = os.path.join(args.source_dir, "configs/twin-congestion.yaml")
    refused = {
        "3 processes on 2 partitions": (3, ["fabric.partitions=2"],
                                        "at least one for each process: run mpirun -np 2"),
        "capture": (2, ["fabric.partitions=4", "telemetry.record.pcap=true"],
                    "telemetry.record.pcap with the fabric twin spread over 2 processes: not "
                    "built yet"),
        "one partition": (2, [], "or cut the fabric twin into 2 or more partitions"),
    }
    said = []
    for name, (processes, sets, message) in refused.items():
        settings = [a for s in sets for a in ("--set", s)]
        out = os.path.join(work, name.replace(" ", "-"))
        proc = run(args, config, out, *settings, prefix=mpirun(processes))
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert message in proc.stderr, (name, proc.stderr)
        assert not os.path.exists(out), f"{name}: something was written"
        checked = subprocess.run([*mpirun(processes), args.etwire, "validate", config, *settings],
                                 capture_output=True, text=True, timeout=300)
        assert checked.returncode == 2, (name, checked.returncode, checked.stderr)
        assert message in checked.stderr, (name, checked.stderr)
        said.append(message)
    return "; ".join(said)


CASES = {"same_on_any_cores": case_same_on_any_cores,
         "same_over_processes": case_same_over_processes,
         "processes_refused": case_processes_refused,
         "capture_on_any_cores": case_capture_on_any_cores,
         "threads_refused": case_threads_refused}


def main():
    return run_case(CASES, "partitions")


if __name__ == "__main__":
    sys.exit(main())
