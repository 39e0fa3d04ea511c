#!/usr/bin/env python3
"""`cmake --install` into a scratch prefix: the binary, the shipped configurations with their
traces, the dashboards, the docs, the man page and the completions land where a system looks,
and the installed etwire runs the README's demo from the installed configuration.

    python3 tests/cli/install_e2e_test.py --etwire build/release/etwire --cmake cmake \
        --build-dir build/release
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--build-dir", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="etwire-install-")
    try:
        prefix = os.path.join(work, "usr")
        proc = subprocess.run([args.cmake, "--install", args.build_dir, "--prefix", prefix],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        for path in ("bin/etwire", "share/etwire/configs/loopback-demo.yaml",
                     "share/etwire/configs/traces/allreduce_8r/allreduce.0.et",
                     "share/etwire/dashboards/etwire-overview.json",
                     "share/doc/etwire/README.md", "share/doc/etwire/results-files.md",
                     "share/man/man1/etwire.1", "share/bash-completion/completions/etwire",
                     "share/zsh/vendor-completions/_etwire"):
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
        print(f"installed under a scratch prefix; the installed etwire ran the demo: "
              f"{version.stdout.strip()}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
