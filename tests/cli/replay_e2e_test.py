#!/usr/bin/env python3
"""End-to-end tests of `etwire replay CONFIG LAB_DIR`, the as-sent prediction of a run from its
capture files.

    python3 tests/cli/replay_e2e_test.py --etwire build/release/etwire --source-dir . --case NAME

Cases:

  twin       configs/twin-congestion.yaml, one iteration, marking low enough that the run marks,
             answers with CNPs and pauses, captured on every port. The run was the twin itself,
             so its frames replayed through the same twin arrive exactly as they did in the run:
             for every port, every count of as-sent.json's lab side (frames, data, bytes, CE
             marks, CNPs, pauses, first and last data arrival) equals the twin's, none held, none
             missing. Replayed through a twin that marks from a lower queue, the same frames come
             out with more CE marks, the lab's side unchanged: the twin's model acts, not the run.
  dpdk_ring  configs/dpdk-ring.yaml on its two net_ring ports at 500 Mb/s (slow enough for the
             capture writer to keep every frame), then replayed: every data frame the files say
             was sent to a port arrived there in the lab and in the twin; DPDK stamps a burst at
             one instant, so the twin's wires held frames until they were free.
  calibrate  The twin run of `twin`, marking from 20 KB, calibrated (etwire calibrate) with the
             configuration's own thresholds (150 KB, where its queues never reach) at port h0: the
             profile sets a marking curve; replayed with it (replay --profile), the frames sent to
             h0 come out CE-marked within 10 % as often as in the run, where without it the twin
             marks none of them. A run on devices refuses --profile without --predict.
  named_profile  A device profile named in the configuration (fabric.profile) acts as --profile
             does: validate keeps the lab's ports as configured and checks the prediction with
             it; configs/dpdk-ring.yaml at 500 Mb/s run with --predict and a profile that puts
             the device's queues at 100 Mb/s; the prediction says it is modelled by the profile
             and moves the crossing bytes no faster than 100 Mb/s, while the run's own ports
             stay at 500 Mb/s (their bytes in less time than 100 Mb/s allows). Replayed, a
             named profile gives exactly what --profile gives; calibrated with one named, the
             written profile holds the named one's settings before the fit's.
  refusals   Each with exit 2 and a message naming what is wrong: a results directory without
             capture files (the file and telemetry.record.pcap), a configuration whose ports have
             other addresses than the captured frames (the file, the frame), a capture cut by a
             snap length, a file that is not a capture, an invalid configuration; calibrate
             without capture files or with a port the configuration lacks; a device profile
             that sets more than the twin's model (its file, line and column), and one whose
             value the twin refuses (validate --profile and replay --profile name it, and
             validate names it when fabric.profile does); a fabric.profile that is not a
             profile, at the key.
"""

import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402

SMALL = ("workload.iterations=1", "workload.warmup_iterations=0", "collectives.chunk_size=64KiB")
CONGESTED = SMALL + ("fabric.ecn.kmin=20KB", "fabric.ecn.kmax=200KB")
SLOW_RING = ("ports[0].speed=500Mbps", "ports[1].speed=500Mbps")
TALLY = ("frames", "data_frames", "data_bytes", "ce_marked", "cnps", "pauses", "first_data_ns",
         "last_data_ns")


def sets(values):
    return [arg for value in values for arg in ("--set", value)]


def run(args, config, out, *values):
    proc = subprocess.run(
        [args.etwire, "run", os.path.join(args.source_dir, config), "--out", out, "--no-metrics",
         "--no-progress", *sets(("telemetry.record.pcap=true",) + values)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def replay(args, config, lab, *values, out=None, profile=None):
    cmd = [args.etwire, "replay", os.path.join(args.source_dir, config), lab, *sets(values)]
    if out:
        cmd += ["--out", out]
    if profile:
        cmd += ["--profile", profile]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def calibrate(args, config, lab, *argv):
    return subprocess.run([args.etwire, "calibrate", os.path.join(args.source_dir, config), lab,
                           *argv], capture_output=True, text=True, timeout=300)


def port_of(doc, name):
    return next(p for p in doc["ports"] if p["name"] == name)


def as_sent(path):
    with open(path) as f:
        return json.load(f)


def case_twin(args, work):
    lab = os.path.join(work, "lab")
    run(args, "configs/twin-congestion.yaml", lab, *CONGESTED)
    proc = replay(args, "configs/twin-congestion.yaml", lab, *CONGESTED)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "warning" not in proc.stderr, proc.stderr
    same = as_sent(os.path.join(lab, "as-sent", "as-sent.json"))
    totals = {key: 0 for key in TALLY}
    for port in same["ports"]:
        for key in TALLY:
            assert port["lab"][key] == port["twin"][key], (port["name"], key, port)
            totals[key] += port["lab"][key]
        assert port["held"] == 0 and port["frames_not_captured"] == 0, port
        assert port["twin"]["data_frames"] == port["data_sent_to"], port
    assert same["twin"]["drops"] == 0, same["twin"]
    assert totals["ce_marked"] > 0 and totals["cnps"] > 0 and totals["pauses"] > 0, totals

    lower = os.path.join(work, "lower")
    proc = replay(args, "configs/twin-congestion.yaml", lab, *CONGESTED, "fabric.ecn.kmin=5KB",
                  "fabric.ecn.kmax=50KB", out=lower)
    assert proc.returncode == 0, proc.stderr[-3000:]
    marked = as_sent(os.path.join(lower, "as-sent.json"))
    lab_marks = sum(p["lab"]["ce_marked"] for p in marked["ports"])
    twin_marks = sum(p["twin"]["ce_marked"] for p in marked["ports"])
    assert lab_marks == totals["ce_marked"], (lab_marks, totals)
    assert twin_marks > lab_marks, (twin_marks, lab_marks)
    for port in marked["ports"]:
        assert port["twin"]["data_frames"] == port["data_sent_to"], port
    return (f"{len(same['ports'])} ports exact ({totals['data_frames']} data frames, "
            f"{totals['ce_marked']} CE marks, {totals['cnps']} CNPs, {totals['pauses']} pauses); "
            f"lower thresholds: {twin_marks} marks against the run's {lab_marks}")


def case_dpdk_ring(args, work):
    lab = os.path.join(work, "lab")
    run(args, "configs/dpdk-ring.yaml", lab, *SLOW_RING)
    proc = replay(args, "configs/dpdk-ring.yaml", lab, *SLOW_RING)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = as_sent(os.path.join(lab, "as-sent", "as-sent.json"))
    held = 0
    for port in doc["ports"]:
        assert port["frames_not_captured"] == 0, port
        assert port["data_sent_to"] > 0, port
        assert port["lab"]["data_frames"] == port["data_sent_to"], port
        assert port["twin"]["data_frames"] == port["data_sent_to"], port
        held += port["held"]
    assert held > 0, doc["ports"]
    assert doc["twin"]["drops"] == 0, doc["twin"]
    return f"{[p['data_sent_to'] for p in doc['ports']]} data frames each way, {held} held"


def case_calibrate(args, work):
    lab = os.path.join(work, "lab")
    run(args, "configs/twin-congestion.yaml", lab, *CONGESTED)
    profile = os.path.join(work, "profile.yaml")
    proc = calibrate(args, "configs/twin-congestion.yaml", lab, *sets(SMALL), "--port", "h0",
                     "--out", profile)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(profile) as f:
        text = f.read()
    assert '- "fabric.ecn.kmin=' in text and '- "fabric.ecn.kmax=' in text, text

    plain = os.path.join(work, "plain")
    proc = replay(args, "configs/twin-congestion.yaml", lab, *SMALL, out=plain)
    assert proc.returncode == 0, proc.stderr[-3000:]
    fitted = os.path.join(work, "fitted")
    proc = replay(args, "configs/twin-congestion.yaml", lab, *SMALL, out=fitted, profile=profile)
    assert proc.returncode == 0, proc.stderr[-3000:]
    before = port_of(as_sent(os.path.join(plain, "as-sent.json")), "h0")
    after = port_of(as_sent(os.path.join(fitted, "as-sent.json")), "h0")
    marks = after["lab"]["ce_marked"]
    assert marks > 0 and before["twin"]["ce_marked"] == 0, (before, after)
    assert abs(after["twin"]["ce_marked"] - marks) <= 0.1 * marks, (after, text)

    proc = subprocess.run([args.etwire, "run", os.path.join(args.source_dir, "configs/dpdk-ring.yaml"),
                           "--profile", profile, "--no-metrics"],
                          capture_output=True, text=True, timeout=60)
    expect_refused(proc, "--profile", "--predict")
    return (f"h0: {marks} CE marks in the run, {after['twin']['ce_marked']} replayed with the "
            f"profile, {before['twin']['ce_marked']} without")


def crossing(results, port):
    """The bytes the flows from port `port` (its index) to another port moved, and the time from
    the first one posted to the last one finished, in seconds."""
    with open(os.path.join(results, "flows.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["src_port"] == port and r["dst_port"] != port]
    assert rows, results
    span = max(int(r["finished_ns"]) for r in rows) - min(int(r["posted_ns"]) for r in rows)
    return sum(int(r["bytes"]) for r in rows), span / 1e9


def slow_ring(args, work):
    """configs/dpdk-ring.yaml with its ports at 500 Mb/s in the file itself: a --set of their
    speed would come after a profile's, and so win over it in the prediction as well."""
    with open(os.path.join(args.source_dir, "configs", "dpdk-ring.yaml")) as f:
        text = f.read()
    traces = os.path.join(os.path.abspath(args.source_dir), "configs", "traces")
    path = os.path.join(work, "slow-ring.yaml")
    with open(path, "w") as f:
        f.write(text.replace("speed: 25Gbps", "speed: 500Mbps").replace(
            "trace: traces/", f"trace: {traces}/"))
    return path


def case_named_profile(args, work):
    ring = slow_ring(args, work)
    profile = os.path.join(work, "slow.yaml")
    with open(profile, "w") as f:
        f.write('set:\n  - "ports[0].speed=100Mbps"\n  - "ports[1].speed=100Mbps"\n')
    named = "fabric.profile=" + profile
    # validate: the lab's ports as configured, its prediction checked with the profile.
    proc = subprocess.run([args.etwire, "validate", ring, "--set", named], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "2 dpdk ports at 500 Mb/s" in proc.stdout, proc.stdout
    assert f"its prediction checked with the device profile {profile}" in proc.stdout, proc.stdout
    out = os.path.join(work, "lab")
    proc = subprocess.run([args.etwire, "run", ring, "--predict", "--out", out, "--no-metrics",
                           "--no-progress", *sets(("telemetry.record.pcap=true", named))],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"modelled by the device profile {profile}" in proc.stdout, proc.stdout[-2000:]
    predicted_bytes, predicted_s = crossing(os.path.join(out, "prediction"), "0")
    assert predicted_s >= predicted_bytes * 8 / 100e6, (predicted_bytes, predicted_s)
    lab_bytes, lab_s = crossing(out, "0")
    assert lab_bytes == predicted_bytes and lab_s < lab_bytes * 8 / 100e6, (lab_bytes, lab_s)

    # Replayed: the named profile is the --profile of the same file.
    by_flag, by_key = os.path.join(work, "by-flag"), os.path.join(work, "by-key")
    proc = replay(args, ring, out, out=by_flag, profile=profile)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = replay(args, ring, out, named, out=by_key)
    assert proc.returncode == 0, proc.stderr[-3000:]
    flag_doc, key_doc = (as_sent(os.path.join(d, "as-sent.json")) for d in (by_flag, by_key))
    assert flag_doc["ports"] == key_doc["ports"], (flag_doc["ports"], key_doc["ports"])
    to_right = port_of(key_doc, "right")["twin"]
    assert to_right["last_data_ns"] - to_right["first_data_ns"] >= \
        to_right["data_bytes"] * 8 / 100e6 * 1e9 * 0.9, to_right

    # Calibrated with it named: the new profile starts with its settings.
    fitted = os.path.join(work, "fitted.yaml")
    proc = calibrate(args, ring, out, "--set", named, "--port", "right", "--out", fitted)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(fitted) as f:
        text = f.read()
    entries = [line.strip()[3:-1] for line in text.split("\nset:\n", 1)[1].splitlines()]
    assert entries[:2] == ["ports[0].speed=100Mbps", "ports[1].speed=100Mbps"], text
    return (f"prediction {predicted_bytes} B from port 0 in {predicted_s * 1e3:.1f} ms (100 Mb/s "
            f"allows no less than {predicted_bytes * 8 / 100e6 * 1e3:.1f}), lab "
            f"{lab_s * 1e3:.1f} ms; replay by key = by flag; calibrate keeps the named settings")


def expect_refused(proc, *fragments):
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr[-2000:])


def case_refusals(args, work):
    ring = "configs/dpdk-ring.yaml"
    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    expect_refused(replay(args, ring, empty), os.path.join(empty, "capture", "left.pcapng"),
                   "telemetry.record.pcap")

    lab = os.path.join(work, "lab")
    run(args, ring, lab, *SLOW_RING)
    expect_refused(replay(args, ring, lab, "ports[0].ipv4=10.77.0.1", "ports[1].ipv4=10.77.1.1"),
                   os.path.join(lab, "capture"), "frame 1: sent to an IP address that no port")

    cut = os.path.join(work, "cut")
    run(args, ring, cut, *SLOW_RING, "telemetry.capture.snap_length=128")
    expect_refused(replay(args, ring, cut), "snap length", "capture.snap_length: 0")

    with open(os.path.join(lab, "capture", "right.pcapng"), "w") as f:
        f.write("not a capture\n")
    expect_refused(replay(args, ring, lab), os.path.join(lab, "capture", "right.pcapng"))

    expect_refused(replay(args, ring, lab, "transport.pmtu=5000"), "pmtu")

    expect_refused(calibrate(args, ring, empty), os.path.join(empty, "capture", "left.pcapng"))
    expect_refused(calibrate(args, ring, cut, "--port", "middle"), "--port middle: no such port",
                   "left right")
    profile = os.path.join(work, "profile.yaml")
    with open(profile, "w") as f:
        f.write('set:\n  - "fabric.ecn.kmin=10KB"\n  - "transport.pmtu=1024"\n')
    expect_refused(replay(args, ring, cut, profile=profile), f"{profile}:3:5: transport.pmtu")
    # A profile whose value the twin refuses: named beside the configuration's error.
    with open(profile, "w") as f:
        f.write('set:\n  - "fabric.ecn.kmin=3MB"\n')
    validate = subprocess.run([args.etwire, "validate", os.path.join(args.source_dir, ring),
                               "--profile", profile], capture_output=True, text=True, timeout=60)
    expect_refused(validate, "fabric.ecn.kmin", f"the device profile {profile}")
    expect_refused(replay(args, ring, cut, profile=profile), "fabric.ecn.kmin",
                   f"the device profile {profile}")
    # Named in the configuration: the same value refused with the profile named, and a file
    # that is not a profile refused at the key.
    validate = subprocess.run([args.etwire, "validate", os.path.join(args.source_dir, ring),
                               "--set", "fabric.profile=" + profile], capture_output=True,
                              text=True, timeout=60)
    expect_refused(validate, "fabric.ecn.kmin", f"the device profile {profile}")
    not_profile = os.path.join(args.source_dir, "configs", "dpdk-ring.yaml")
    expect_refused(replay(args, ring, cut, "fabric.profile=" + not_profile), "fabric.profile",
                   "not a usable device profile", f"{not_profile}: not a device profile")
    return ("no capture, other addresses, cut frames, not a capture, bad configuration; "
            "calibrate without captures or with an unknown port; a profile beyond the model: "
            "refused")


CASES = {"twin": case_twin, "dpdk_ring": case_dpdk_ring, "calibrate": case_calibrate,
         "named_profile": case_named_profile, "refusals": case_refusals}

if __name__ == "__main__":
    sys.exit(run_case(CASES, "replay"))
