#!/usr/bin/env python3
"""`etwire completion bash|zsh`: the script completes etwire's commands, subcommands and options
as bash would call it.

    python3 tests/cli/completion_e2e_test.py --etwire build/release/etwire --source-dir . --case bash

Cases:

  bash   the bash script, sourced: the commands, a command's options, a nested command's, files
         where no command or option is begun; every command `etwire --help` lists completes.
  zsh    the zsh script is the bash one behind zsh's bashcompinit; an unknown shell is refused.
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testing"))
from e2e_cases import run_case  # noqa: E402


def complete(script, *words):
    """What the script's function offers for the command line `words` (the last being typed)."""
    line = " ".join(f"'{w}'" for w in words)
    proc = subprocess.run(
        ["bash", "-c", f'source "$1"; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _etwire; '
         'printf "%s\\n" "${COMPREPLY[@]}"', "-", script],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.split("\n") if w]


def case_bash(args, work):
    script = os.path.join(work, "etwire.bash")
    proc = subprocess.run([args.etwire, "completion", "bash"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    with open(script, "w") as f:
        f.write(proc.stdout)
    assert complete(script, "etwire", "ru") == ["run"]
    assert complete(script, "etwire", "run", "--no-p") == ["--no-progress"]
    assert complete(script, "etwire", "run", "c.yaml", "--o") == ["--out"]
    assert sorted(complete(script, "etwire", "synth", "m")) == ["microbench", "model", "moe-mix"]
    assert "--hidden" in complete(script, "etwire", "synth", "model", "--h")
    # A command's argument: nothing offered, so bash falls back to file names.
    assert complete(script, "etwire", "run", "") == []
    help_text = subprocess.run([args.etwire, "--help"], capture_output=True, text=True).stdout
    listed = re.findall(r"^  ([a-z-]+)\s", help_text.split("Subcommands:")[-1], re.M)
    assert "run" in listed and "sweep" in listed, help_text
    offered = complete(script, "etwire", "")
    for command in listed:
        assert command in offered, (command, offered)
        assert "--help" in complete(script, "etwire", command, "--"), command
    return f"{len(listed)} commands, their options and synth's subcommands complete"


def case_zsh(args, work):
    proc = subprocess.run([args.etwire, "completion", "zsh"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("#compdef etwire\n"), proc.stdout[:200]
    assert "bashcompinit" in proc.stdout and "complete -o default -F _etwire etwire" in proc.stdout
    proc = subprocess.run([args.etwire, "completion", "fish"], capture_output=True, text=True)
    assert proc.returncode == 2 and "fish not in {bash,zsh}" in proc.stderr, proc.stderr
    return "the zsh script wraps the bash one; fish is refused (exit 2)"


if __name__ == "__main__":
    sys.exit(run_case({"bash": case_bash, "zsh": case_zsh}, "completion"))
