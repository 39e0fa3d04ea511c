#!/usr/bin/env bash
# Fails when code points up the layer order. The order is the list of add_subdirectory() calls in
# the root CMakeLists.txt, lowest layer first; a file in a layer may include only headers of its
# own layer or of layers listed before it, and a library may link only libraries of those layers.
# A top-level folder holding C++ code that is not a layer (tests/ and bench/ excepted) fails too.
# One level down the same holds between a layer's sub-layers: its subfolders in the order of the
# layer's own add_subdirectory() calls, and its root folder at the place of the layer's first
# add_library() among them. A file may include headers of its own sub-layer and of those before
# it; a subfolder holding C++ code that the layer does not add fails.
#
#   scripts/check-layers.sh [--root DIR]    DIR: the source tree (default: this checkout)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
while (($#)); do
  case "$1" in
    --root) root="$(cd "$2" && pwd)"; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-layers: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

exec python3 - "$root" <<'PY'
import os, re, sys

root = sys.argv[1]
OUTSIDE = {"tests", "bench", "build", "scripts", "configs", "docs", "dashboards"}

top = open(os.path.join(root, "CMakeLists.txt")).read()
top = top.split("if(ETWIRE_BUILD_TESTS)")[0]
layers = re.findall(r"^\s*add_subdirectory\((\w+)\)", top, re.M)
if not layers:
    sys.exit("check-layers: the root CMakeLists.txt lists no layers (add_subdirectory)")
rank = {name: i for i, name in enumerate(layers)}


def sub_layers(layer):
    """The layer's sub-layers, lowest first: "." is its root folder."""
    path = os.path.join(root, layer, "CMakeLists.txt")
    text = open(path).read() if os.path.exists(path) else ""
    events = [(m.start(), m.group(1)) for m in re.finditer(r"^\s*add_subdirectory\((\w+)\)", text, re.M)]
    first_library = re.search(r"^\s*add_library\(", text, re.M)
    events.append((first_library.start() if first_library else -1, "."))
    return {name: i for i, (_, name) in enumerate(sorted(events))}


def sub_layer_name(layer, sub):
    return f"{layer}/" if sub == "." else f"{layer}/{sub}/"


def sub_layer_of(layer_relative):
    """The sub-layer of a path inside a layer ("." for a file at its root)."""
    parts = layer_relative.split("/")
    return parts[0] if len(parts) > 1 else "."

problems = []
libraries = {}  # library -> layer
links = []      # (file, line, target, library)

for layer in sorted(os.listdir(root)):
    path = os.path.join(root, layer)
    if not os.path.isdir(path) or layer.startswith(".") or layer in OUTSIDE:
        continue
    has_code = any(f.endswith((".h", ".cc")) for _, _, fs in os.walk(path) for f in fs)
    if layer not in rank:
        if has_code:
            problems.append(f"{layer}/: holds C++ code but is not a layer of the root CMakeLists.txt")
        continue
    subs = sub_layers(layer)
    for sub in sorted(os.listdir(path)):
        sub_path = os.path.join(path, sub)
        if os.path.isdir(sub_path) and sub not in subs and any(
                f.endswith((".h", ".cc")) for _, _, fs in os.walk(sub_path) for f in fs):
            problems.append(f"{layer}/{sub}/: holds C++ code but is not a sub-layer of "
                            f"{layer}/CMakeLists.txt (add_subdirectory)")
    for dirpath, _, names in os.walk(path):
        for name in sorted(names):
            file = os.path.join(dirpath, name)
            rel = os.path.relpath(file, root)
            own_sub = sub_layer_of(os.path.relpath(file, path))
            if name.endswith((".h", ".cc")):
                for n, text in enumerate(open(file, errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"/]+)/([^"]+)"', text)
                    if not m or m.group(1) not in rank:
                        continue
                    if rank[m.group(1)] > rank[layer]:
                        problems.append(
                            f"{rel}:{n}: includes {m.group(1)}/ (layer {m.group(1)}) from layer "
                            f"{layer}, which comes before it")
                    elif m.group(1) == layer:
                        their_sub = sub_layer_of(m.group(2))
                        if own_sub in subs and subs.get(their_sub, -1) > subs[own_sub]:
                            problems.append(
                                f"{rel}:{n}: includes {sub_layer_name(layer, their_sub)} from "
                                f"sub-layer {sub_layer_name(layer, own_sub)}, which comes before "
                                f"it in {layer}/CMakeLists.txt")
            elif name == "CMakeLists.txt":
                text = open(file).read()
                for m in re.finditer(r"add_library\((\w+)", text):
                    libraries[m.group(1)] = layer
                for m in re.finditer(r"target_link_libraries\((\w+)([^)]*)\)", text):
                    line = text.count("\n", 0, m.start()) + 1
                    for lib in re.findall(r"\betwire_\w+", m.group(2)):
                        links.append((rel, line, m.group(1), lib))

for rel, line, target, lib in links:
    own = libraries.get(target)
    theirs = libraries.get(lib)
    if own is None or theirs is None:
        continue  # a target of the root (etwire_warnings) or an executable's
    if rank[theirs] > rank[own]:
        problems.append(f"{rel}:{line}: {target} (layer {own}) links {lib} (layer {theirs}), "
                        f"which comes after it")

if problems:
    print("check-layers: code points up the layer order (" + " < ".join(layers) + "):",
          file=sys.stderr)
    for p in problems:
        print("  " + p, file=sys.stderr)
    sys.exit(1)
print(f"check-layers: {len(layers)} layers, {len(libraries)} libraries, nothing points up")
PY
