"""The command line every end-to-end test script shares: --etwire, --source-dir and --case NAME
run one case of CASES in a temporary directory of its own, print what it checked, and remove the
directory; an assertion that fails ends the script with its traceback (a non-zero exit)."""

import argparse
import shutil
import tempfile


def run_case(cases, prefix, options=()):
    """Runs the case the command line names; returns the exit status (0). `options`: the names
    of further options the script requires ("--build-dir"), in args as their attributes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    for option in options:
        parser.add_argument(option, required=True)
    parser.add_argument("--case", required=True, choices=sorted(cases))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix=f"etwire-{prefix}-{args.case}-")
    try:
        print(f"{args.case}: {cases[args.case](args, work)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0
