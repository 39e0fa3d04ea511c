"""What the tables of docs/dut-validation.md share (scripts/dut-validation.py): reading a recorded
sitting, running a lab configuration on the twin as run --predict would, and the cells' formats."""

import json
import os
import re
import subprocess
import sys

TOOL = "dut-validation"


def read_record(path):
    """A recorded sitting: one JSON object a line."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def on_the_twin(text):
    """A lab configuration with its ports on the twin, as run --predict makes it: loopback ports
    without their DPDK settings and next hops, no DPDK section, no capture."""
    text = re.sub(r"^dpdk:\n(  .*\n)+", "", text, flags=re.M)
    text = re.sub(r"^    (dpdk|next_hop_mac): .*\n", "", text, flags=re.M)
    text = text.replace("backend: dpdk", "backend: loopback")
    return text.replace("record: {pcap: true}", "record: {pcap: false}")


def run_on_the_twin(etwire, lab, out, *more):
    """The twin's run of a lab configuration (its path): its summary.json."""
    with open(lab) as f:
        text = on_the_twin(f.read())
    config = os.path.join(os.path.dirname(lab), "twin.yaml")
    with open(config, "w") as f:
        f.write(text)
    proc = subprocess.run([etwire, "run", config, "--no-progress", "--no-metrics", *more],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"{TOOL}: the twin's run of {lab} failed ({proc.returncode}):\n"
                 f"{proc.stderr[-2000:]}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def pct(lab, other):
    """`other` against `lab`, in percent ("new" where the lab had none and `other` some)."""
    return f"{100 * (other - lab) / lab:+.1f} %" if lab else ("0" if other == 0 else "new")


def count(n):
    return f"{n:,}"


def span(values, fmt="{:.0f}"):
    """"a to b" of the values (one value alone when they agree to the format)."""
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low} to {high}"
