#!/usr/bin/env python3
"""`cmake --install` into a scratch prefix, and the .deb `cpack` makes installed by dpkg into a
scratch root (its dependencies met by this machine's packages): the binary, the shipped configurations with their traces, the dashboards, the docs, the
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
    assert proc.returncode == 0, proc.stderr + proc.stdout[-2000:]  # the error, not the listing
    return f"installed under a scratch prefix; it ran the demo: {check_installed(args, prefix, work)}"


def installed_packages():
    """{name: version} of this machine's installed packages and of what they provide (a virtual
    package such as libspdlog1.10-fmt9 takes its provider's version, or the one it states)."""
    listing = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Package}\t${Version}\t"
                              "${Provides}\n"], capture_output=True, text=True, check=True).stdout
    packages = {}
    for line in listing.splitlines():
        status, name, version, provides = (line.split("\t") + [""])[:4]
        if status != "install ok installed":
            continue
        packages[name] = version
        for provided in filter(None, (p.strip() for p in provides.split(","))):
            words = provided.replace("(", " ").replace(")", " ").replace("=", " ").split()
            packages.setdefault(words[0], words[1] if len(words) > 1 else version)
    return packages


def satisfied(dependency, packages):
    """Whether `packages` meet `dependency` ("zlib1g (>= 1:1.1.4)")."""
    words = dependency.strip().replace("(", " ").replace(")", " ").split()
    name = words[0].split(":")[0]
    if name not in packages:
        return False
    if len(words) < 3:
        return True
    operator = {">=": "ge", "<=": "le", ">>": "gt", "<<": "lt", "=": "eq"}[words[1]]
    return subprocess.run(["dpkg", "--compare-versions", packages[name], operator,
                           words[2]]).returncode == 0


def case_deb(args, work):
    out = os.path.join(work, "package")
    proc = subprocess.run([args.cpack, "-G", "DEB", "-B", out, "--config",
                           os.path.join(args.build_dir, "CPackConfig.cmake")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr + proc.stdout[-2000:]  # the error, not the listing
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    assert len(debs) == 1, os.listdir(out)
    deb = os.path.join(out, debs[0])
    fields = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Depends"], capture_output=True,
                            text=True).stdout
    depends = [d.strip().split()[0] for d in fields.split("Depends:")[1].split(",")]
    for package in ("libyaml-cpp0.7", "libprotobuf32", "librte-eal23", "librte-net-ring23",
                    "librte-net-af-packet23", "librte-net-memif23", "libibverbs1", "libopenmpi3"):
        assert package in depends, (package, depends)
    # This machine built etwire from the Debian packages, so it has every one the .deb depends on,
    # at a version the dependency accepts.
    packages = installed_packages()
    for clause in fields.split("Depends:")[1].strip().split(","):
        assert any(satisfied(alternative, packages) for alternative in clause.split("|")), clause
    # dpkg installs it into a scratch root of its own: its database there holds nothing else, so
    # the dependencies (checked above against this machine) are forced.
    root = os.path.join(work, "root")
    for d in ("info", "updates", "triggers"):
        os.makedirs(os.path.join(root, "var/lib/dpkg", d))
    open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
    proc = subprocess.run(["dpkg", f"--root={root}", "--force-depends", "--log=/dev/null", "-i",
                           deb], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr + proc.stdout[-2000:]  # the error, not the listing
    status = subprocess.run(["dpkg", f"--root={root}", "-s", "etwire"], capture_output=True,
                            text=True).stdout
    assert "Status: install ok installed" in status, status
    listed = subprocess.run(["dpkg", f"--root={root}", "-L", "etwire"], capture_output=True,
                            text=True).stdout.split()
    assert "/usr/bin/etwire" in listed, listed
    installed = check_installed(args, os.path.join(root, "usr"), work)
    return (f"{debs[0]}, {len(depends)} dependencies met here; dpkg installed it into a scratch "
            f"root ({len(listed)} paths) and it ran the demo: {installed}")


if __name__ == "__main__":
    sys.exit(run_case({"prefix": case_prefix, "deb": case_deb}, "install",
                      ("--cmake", "--cpack", "--build-dir")))
