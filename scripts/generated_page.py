"""What the scripts that write parts of a page share (scripts/case-study-*.py): running etwire
for a variant, and the page's generated parts.

A generated section of a page lies between `<!-- generated: NAME -->` and
`<!-- end of generated: NAME -->`; an image is a file beside the page, by its path relative to
the page. A script makes every part from today's runs, then prints them (no page named), checks
the page against them (--check: exit 1 naming each stale part) or rewrites them (--write)."""

import os
import re
import subprocess
import sys

BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end of generated: \2 -->)", re.S)


def add_page_options(parser, root):
    """--etwire (ETWIRE or build/release/etwire under `root`), and --check DOC | --write DOC."""
    parser.add_argument("--etwire", default=os.environ.get(
        "ETWIRE", os.path.join(root, "build", "release", "etwire")))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", metavar="DOC")
    mode.add_argument("--write", metavar="DOC")


def require_etwire(parser, etwire):
    """Ends the script through `parser` unless `etwire` is an executable."""
    if not os.access(etwire, os.X_OK):
        parser.error(f"--etwire: {etwire} is not an executable (build it: scripts/setup.sh)")


def run_etwire(tool, etwire, config, target, name, settings):
    """`etwire run config --set ...` into `target`; exits naming `tool` and the run when it fails."""
    args = [etwire, "run", config, "--out", target, "--no-progress", "--no-metrics"]
    for setting in settings:
        args += ["--set", setting]
    print(f"running {name}", file=sys.stderr)
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{tool}: the {name} run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return target


def read_page(tool, doc, names):
    """The text of page `doc`, which must have a generated section of each of `names`."""
    with open(doc) as f:
        text = f.read()
    missing = set(names) - {m.group(2) for m in BLOCK.finditer(text)}
    if missing:
        sys.exit(f"{tool}: {doc} has no generated section {', '.join(sorted(missing))} "
                 "(<!-- generated: NAME --> ... <!-- end of generated: NAME -->)")
    return text


def _image_path(doc, name):
    return os.path.join(os.path.dirname(os.path.abspath(doc)), name)


def _stale(doc, text, sections, images):
    stale = [m.group(2) for m in BLOCK.finditer(text) if m.group(3) != sections.get(m.group(2))]
    for name, body in images.items():
        path = _image_path(doc, name)
        if not os.path.exists(path):
            stale.append(name)
            continue
        with open(path) as f:
            if f.read() != body:
                stale.append(name)
    return stale


def settle(tool, doc, check, text, sections, images=None):
    """Prints the parts (no `doc`), checks `doc`'s (`check`) or rewrites them; the exit code."""
    images = images or {}
    if not doc:
        for name, body in sections.items():
            print(f"<!-- generated: {name} -->\n{body}<!-- end of generated: {name} -->\n")
        return 0
    stale = _stale(doc, text, sections, images)
    if check:
        if stale:
            print(f"{doc}: {', '.join(stale)} differ from what the runs give today; run "
                  f"scripts/{tool}.py --write {doc} and read the diff", file=sys.stderr)
            return 1
        print(f"{doc}: every generated part is today's")
        return 0
    with open(doc, "w") as f:
        f.write(BLOCK.sub(lambda m: m.group(1) + sections.get(m.group(2), m.group(3))
                          + m.group(4), text))
    for name, body in images.items():
        path = _image_path(doc, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(body)
    print(f"{doc}: {len(stale)} part(s) rewritten" + (f": {', '.join(stale)}" if stale else ""))
    return 0
