#!/usr/bin/env python3
"""Every configuration `etwire run` refuses before its first packet, `etwire validate` refuses
too: both exit 2 naming the same key, and the run writes no results.

    python3 tests/cli/setup_parity_e2e_test.py --etwire build/release/etwire --source-dir .

Cases (each a configuration that once passed validate, or one of its kind):
  reserve      4096 ports on one switch with the default buffer: the ingress reserve leaves
               nothing to share (the twin refuses it when it is built).
  oversub      an oversubscription so small the uplinks' derived speed is 0.
  empty_trace  trace: "".
  not_utf8     a run name with bytes that are not UTF-8 (summary.json holds UTF-8 only).
  switch_port  telemetry.capture.switch_ports naming a switch port the twin does not have.
  multicast    a port entry whose MAC address, stepped by its count, crosses into multicast.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def config_text(source_dir, ports="  - name: p\n    count: 8\n    speed: 100Gbps\n",
                trace=None, extra=""):
    if trace is None:
        trace = os.path.join(source_dir, "configs", "traces", "allreduce_8r", "allreduce")
    return (f"workload:\n  jobs:\n    - trace: \"{trace}\"\nports:\n{ports}{extra}").encode()


def cases(source_dir):
    congestion = open(os.path.join(source_dir, "configs", "twin-congestion.yaml"), "rb").read()
    return {
        "reserve": (config_text(source_dir, ports="  - name: p\n    count: 4096\n"
                                "    speed: 100Gbps\n"), "fabric.buffer.ingress_reserve"),
        "oversub": (congestion.replace(b"oversubscription: 2 ", b"oversubscription: 1e-300 "),
                    "fabric"),
        "empty_trace": (config_text(source_dir, trace=""), "workload.jobs[0].trace"),
        "not_utf8": (b"run:\n  name: \"lab \xff run\"\n" + config_text(source_dir), "run.name"),
        "switch_port": (config_text(source_dir, extra="telemetry:\n  record: {pcap: true}\n"
                                    "  capture: {switch_ports: [switch/p9]}\n"),
                        "telemetry.capture.switch_ports[0]"),
        "multicast": (config_text(source_dir, ports="  - name: p\n    count: 8\n"
                                  "    speed: 100Gbps\n    mac: 02:ff:ff:ff:ff:fc\n"),
                      "ports[0].mac"),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="etwire-parity-")
    failures = []
    try:
        for name, (text, key) in cases(os.path.abspath(args.source_dir)).items():
            # Beside the bundled configurations, so relative paths resolve as theirs do.
            path = os.path.join(args.source_dir, "configs", f".parity-{os.getpid()}-{name}.yaml")
            with open(path, "wb") as f:
                f.write(text)
            try:
                out = os.path.join(work, name)
                results = {}
                for command in (["validate", path], ["run", path, "--out", out, "--no-metrics"]):
                    proc = subprocess.run([args.etwire, *command], capture_output=True,
                                          timeout=120)
                    said = (proc.stdout + proc.stderr).decode(errors="replace")
                    results[command[0]] = (proc.returncode, said)
                for command, (code, said) in results.items():
                    if code != 2 or f" {key}: " not in said:
                        failures.append(f"{name}: {command} exited {code}, expected 2 naming "
                                        f"{key}:\n{said[-1500:]}")
                if os.path.exists(os.path.join(out, "summary.json")):
                    failures.append(f"{name}: run wrote results")
                print(f"{name}: validate and run both refuse it at {key}")
            finally:
                os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
