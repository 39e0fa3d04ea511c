#!/usr/bin/env python3
"""etwire.1, the man page the build writes from the binary's own help: a section per command
and nested command `etwire --help` lists, the help's text kept from being read as requests.

    python3 tests/cli/man_page_test.py --etwire build/release/etwire --man build/release/etwire.1
"""

import argparse
import re
import subprocess
import sys

REQUESTS = (".TH ", ".SH ", ".SS ", ".B ", ".nf", ".fi")


def commands(etwire, *words):
    """The commands the "Subcommands:" part of `etwire WORDS --help` lists."""
    text = subprocess.run([etwire, *words, "--help"], capture_output=True, text=True).stdout
    if "Subcommands:" not in text:
        return []
    return re.findall(r"^  ([a-z][a-z-]*)\s", text.split("Subcommands:")[-1], re.M)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--man", required=True)
    args = parser.parse_args()
    with open(args.man) as f:
        page = f.read()
    lines = page.splitlines()
    assert lines[0].startswith(".TH ETWIRE 1 "), lines[0]
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "SEE ALSO"):
        assert f".SH {section}" in lines, section
    # Every line that starts a request is one of the page's own: help text that begins with a
    # dot or a quote is escaped.
    for line in lines:
        if line.startswith((".", "'")):
            assert line.startswith(REQUESTS), line
    sections = [line[4:] for line in lines if line.startswith(".SS ")]
    expected = []
    for command in commands(args.etwire):
        expected.append(command)
        expected += [f"{command} {sub}" for sub in commands(args.etwire, command)]
    assert sections == expected, (sections, expected)
    assert "synth model" in sections and "run" in sections, sections
    # A command's section holds its options, as its help lists them.
    run_help = subprocess.run([args.etwire, "run", "--help"], capture_output=True,
                              text=True).stdout
    run_section = page.split(".SS run\n")[1].split(".SS ")[0]
    for option in re.findall(r"--[a-z][a-z-]+", run_help):
        assert option in run_section, option
    print(f"man page: {len(sections)} command sections, every option of run in its own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
