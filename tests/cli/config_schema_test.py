#!/usr/bin/env python3
"""`etwire schema`, the run configuration's JSON Schema: a valid draft-07 schema that accepts
every shipped configuration and refuses what etwire's own loader refuses (a misspelt key at the
top, in a section, in a list's element; a misspelt name; a number out of range; a unit that is
no unit), while a spelling the loader accepts ("Write_With_Imm") passes both. Each case is run
through `etwire validate` too, so the schema and the loader are held to agree.

    python3 tests/cli/config_schema_test.py --etwire build/release/etwire --source-dir . \
        [--built build/release/etwire.schema.json]
"""

import argparse
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
import yaml


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def errors(validator, document):
    return sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))


def with_absolute_traces(node, config_dir):
    """`node` with each relative `trace:` made absolute, so that the document validates from a
    scratch directory (never beside the shipped configs, which install copies while tests run)."""
    if isinstance(node, dict):
        return {key: (os.path.join(config_dir, value)
                      if key == "trace" and isinstance(value, str) and not os.path.isabs(value)
                      else with_absolute_traces(value, config_dir))
                for key, value in node.items()}
    if isinstance(node, list):
        return [with_absolute_traces(value, config_dir) for value in node]
    return node


def validate_with_etwire(etwire, document, config_dir, work, name):
    """Exit code and output of `etwire validate` on `document`, written to `work`."""
    path = os.path.join(work, f"{name}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(with_absolute_traces(document, config_dir), f, sort_keys=False)
    run = subprocess.run([etwire, "validate", path], capture_output=True, text=True, cwd=work)
    return run.returncode, run.stdout + run.stderr


def mutations(demo):
    """(name, document, the key path the schema must name, the text etwire's error holds)."""
    cases = []
    doc = copy.deepcopy(demo)
    doc["transprot"] = {}
    cases.append(("top-level key", doc, [], "transprot"))
    doc = copy.deepcopy(demo)
    doc["workload"]["iteratoins"] = 2
    cases.append(("section key", doc, ["workload"], "iteratoins"))
    doc = copy.deepcopy(demo)
    doc["ports"][0]["nmae"] = doc["ports"][0].pop("name")
    cases.append(("list element key", doc, ["ports", 0], "nmae"))
    doc = copy.deepcopy(demo)
    doc.setdefault("fabric", {})["topology"] = "leaf-spline"
    cases.append(("name", doc, ["fabric", "topology"], "leaf-spline"))
    doc = copy.deepcopy(demo)
    doc["workload"]["iterations"] = -3
    cases.append(("range", doc, ["workload", "iterations"], "iterations"))
    doc = copy.deepcopy(demo)
    doc["ports"][0]["speed"] = "100Gbsp"
    cases.append(("unit", doc, ["ports", 0, "speed"], "100Gbsp"))
    return cases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etwire", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--built", help="the schema the build wrote, which must be the same")
    args = parser.parse_args()
    args.etwire = os.path.abspath(args.etwire)
    args.source_dir = os.path.abspath(args.source_dir)
    printed = subprocess.run([args.etwire, "schema"], capture_output=True, text=True, check=True)
    schema = json.loads(printed.stdout)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema,
                                           format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    if args.built:
        with open(args.built) as f:
            assert json.load(f) == schema, "the build's etwire.schema.json is not `etwire schema`"

    config_dir = os.path.join(args.source_dir, "configs")
    shipped = sorted(glob.glob(os.path.join(config_dir, "*.yaml")))
    assert len(shipped) >= 5, shipped
    for path in shipped:
        found = errors(validator, load_yaml(path))
        assert not found, (path, [(list(e.absolute_path), e.message) for e in found])

    demo = load_yaml(os.path.join(config_dir, "loopback-demo.yaml"))
    with tempfile.TemporaryDirectory() as work:
        code, text = validate_with_etwire(args.etwire, demo, config_dir, work, "demo")
        assert code == 0, text
        for name, doc, where, word in mutations(demo):
            found = errors(validator, doc)
            assert found, f"{name}: the schema accepts it"
            assert any(list(e.absolute_path) == where for e in found), \
                (name, [(list(e.absolute_path), e.message) for e in found])
            code, text = validate_with_etwire(args.etwire, doc, config_dir, work, "bad")
            assert code == 2 and word in text, (name, code, text)
        loose = copy.deepcopy(demo)
        loose["transport"]["op"] = "Write_With_Imm"
        assert not errors(validator, loose), "Write_With_Imm"
        code, text = validate_with_etwire(args.etwire, loose, config_dir, work, "loose")
        assert code == 0, text

        out = subprocess.run([args.etwire, "schema", "-o", "/proc/version/no"],
                             capture_output=True, text=True)
        assert out.returncode == 1 and "/proc/version/no" in out.stderr, out

    print(f"schema: {len(shipped)} shipped configurations valid, {len(mutations(demo))} "
          f"mistakes refused by the schema and by etwire validate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
