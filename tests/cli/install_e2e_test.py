#!/usr/bin/env python3
"""`cmake --install` into a scratch prefix, and the .deb `cpack` makes unpacked into a scratch
root: the binary, the shipped configurations with their traces, the dashboards, the docs, the
man page, the completions and the configuration's JSON Schema land where a system looks, and the installed etwire runs the
README's demo from the installed configuration. The .deb depends on the Debian packages of the
libraries etwire links and of the DPDK drivers it loads by name.

    python3 tests/cli/install_e2e_test.py --etwire build/release/etwire --cmake cmake \
        --cpack cpack --build-dir build/release --source-dir . --case prefix|deb
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402


FILES = ("bin/etwire", "share/etwire/configs/loopback-demo.yaml",
         "share/etwire/configs/traces/allreduce_8r/allreduce.0.et",
         "share/etwire/dashboards/etwire-overview.json", "share/doc/etwire/README.md",
         "share/doc/etwire/results-files.md", "share/man/man1/etwire.1",
         "share/bash-completion/completions/etwire", "share/zsh/vendor-completions/_etwire",
         "share/etwire/etwire.schema.json")


def check_installed(args, prefix, work):
    """The files are under `prefix`, and its etwire is the build's and runs the demo."""
    for path in FILES:
        assert os.path.isfile(os.path.join(prefix, path)), path
    assert not os.path.exists(os.path.join(prefix, "share/etwire/dashboards/generate.py"))
    installed = os.path.join(prefix, "bin/etwire")
    version = subprocess.run([installed, "--version"], capture_output=True, text=True)
    built = subprocess.run([args.etwire, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout == built.stdout, (version, built)
    out = os.path.join(work, "results")
    run = subprocess.run(
        [installed, "run", os.path.join(prefix, "share/etwire/configs/loopback-demo.yaml"),
         "--no-metrics", "--no-progress", "--out", out],
        capture_output=True, text=True, timeout=300, cwd=work)
    assert run.returncode == 0, run.stderr[-2000:]
    with open(os.path.join(out, "summary.json")) as f:
        assert json.load(f)["status"] == "completed"
    return version.stdout.strip()


def case_prefix(args, work):
    prefix = os.path.join(work, "usr")
    proc = subprocess.run([args.cmake, "--install", args.build_dir, "--prefix", prefix],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return f"installed under a scratch prefix; it ran the demo: {check_installed(args, prefix, work)}"


def case_deb(args, work):
    out = os.path.join(work, "package")
    proc = subprocess.run([args.cpack, "-G", "DEB", "-B", out, "--config",
                           os.path.join(args.build_dir, "CPackConfig.cmake")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    assert len(debs) == 1, os.listdir(out)
    deb = os.path.join(out, debs[0])
    fields = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Depends"], capture_output=True,
                            text=True).stdout
    depends = [d.strip().split()[0] for d in fields.split("Depends:")[1].split(",")]
    for package in ("libyaml-cpp0.7", "libprotobuf32", "librte-eal23", "librte-net-ring23",
                    "librte-net-af-packet23", "librte-net-memif23", "libibverbs1", "libopenmpi3"):
        assert package in depends, (package, depends)
    root = os.path.join(work, "root")
    proc = subprocess.run(["dpkg-deb", "-x", deb, root], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    installed = check_installed(args, os.path.join(root, "usr"), work)
    return f"{debs[0]}, {len(depends)} dependencies; unpacked, it ran the demo: {installed}"


if __name__ == "__main__":
    sys.exit(run_case({"prefix": case_prefix, "deb": case_deb}, "install",
                      ("--cmake", "--cpack", "--build-dir")))
