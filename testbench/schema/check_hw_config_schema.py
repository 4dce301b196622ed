#!/usr/bin/python3
"""CTest: the generated JSON Schema of hardware configs (docs/schema/hw_config.schema.json) is a
valid draft 2020-12 schema, accepts hw/configs/*.json and the fuzz seeds, rejects what the parser
rejects for a single field (out of range, wrong type, unknown key, unknown name), and every key
it names is in the fuzz dictionary (testbench/fuzz/dict_from_schema.py).
Needs python3-jsonschema (tools/setup.sh).  usage: check_hw_config_schema.py REPO_ROOT"""
import copy
import json
import pathlib
import subprocess
import sys

import jsonschema


def fail(msg):
    print("check_hw_config_schema: " + msg, file=sys.stderr)
    sys.exit(1)


def leaves(schema, path=()):
    """(path, property schema) of every parameter: properties that are not sections."""
    for key, sub in schema.get("properties", {}).items():
        if sub.get("type") == "object" and "properties" in sub:
            yield from leaves(sub, path + (key,))
        else:
            yield path + (key,), sub


def set_at(doc, path, value):
    for key in path[:-1]:
        doc = doc.setdefault(key, {})
    doc[path[-1]] = value


def main():
    root = pathlib.Path(sys.argv[1])
    schema = json.loads((root / "docs/schema/hw_config.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)

    # hw/configs also holds `ahbm-sim validate`'s reference presets (attacc-*.json, cent-*.json,
    # read by runtime/validate): they are not hardware configs.
    presets = ("attacc-", "cent-")
    configs = [p for p in sorted((root / "hw/configs").glob("*.json")) if not p.name.startswith(presets)]
    good = configs + sorted((root / "testbench/fuzz/corpus/hw").glob("*.json"))
    if len(good) < 2:
        fail("no configs to validate")
    for f in good:
        errors = [e.message for e in v.iter_errors(json.loads(f.read_text()))]
        if errors:
            fail(f"{f} does not validate: {errors[0]}")

    base = json.loads((root / "hw/configs/default.json").read_text())
    params = list(leaves(schema))
    if len(params) < 40:
        fail(f"only {len(params)} parameters in the schema")
    checked = 0
    for path, prop in params:
        bad = [{"unexpected": "object"} if prop["type"] != "object" else 3]
        if "maximum" in prop:
            bad += [prop["maximum"] + 1, prop["minimum"] - 1]
        if prop["type"] == "integer":
            bad.append(1.5)
        if "enum" in prop:
            bad.append("no_such_value")
        for value in bad:
            doc = copy.deepcopy(base)
            set_at(doc, path, value)
            if v.is_valid(doc):
                fail(f"{'.'.join(path)} = {value!r} validates, but the parser rejects it")
            checked += 1
    for path, _ in params:  # an unknown key next to every parameter
        doc = copy.deepcopy(base)
        set_at(doc, path[:-1] + ("no_such_field",), 1)
        if v.is_valid(doc):
            fail(f"unknown key next to {'.'.join(path)} validates")
    doc = copy.deepcopy(base)
    doc["_comment"] = "free text"
    if not v.is_valid(doc):
        fail("a _comment key is rejected")

    # noc.params and system.network.params: each model's declared keys with their bounds and
    # names, and no other key.
    noc_checked = 0
    counts = []
    for where, least in ((("noc",), 7), (("system", "network"), 5)):
        node = schema
        for key in where:
            node = node["properties"][key]
        rules = node.get("allOf", [])
        if len(rules) < least:
            fail(f"only {len(rules)} {'.'.join(where)} models declare their parameters in the schema")
        counts.append(len(rules))
        for rule in rules:
            model = rule["if"]["properties"]["model"]["const"]
            props = rule["then"]["properties"]["params"]["properties"]
            for key, prop in props.items():
                doc = copy.deepcopy(base)
                set_at(doc, where, {"model": model, "params": {key: prop["default"]}})
                if not v.is_valid(doc):
                    fail(f"{'.'.join(where)} {model}: {key} at its default does not validate")
                bad = [{"unexpected": "object"} if prop["type"] != "object" else 3]
                if "maximum" in prop:
                    bad.append(prop["maximum"] + 1)
                if "enum" in prop:
                    bad.append("no_such_value")
                for value in bad:
                    set_at(doc, where, {"model": model, "params": {key: value}})
                    if v.is_valid(doc):
                        fail(f"{'.'.join(where)} {model}: params.{key} = {value!r} validates, but the model rejects it")
                    noc_checked += 1
                params.append((where + ("params", key), prop))  # for the fuzz dictionary check below
            doc = copy.deepcopy(base)
            set_at(doc, where, {"model": model, "params": {"no_such_param": 1}})
            if v.is_valid(doc):
                fail(f"{'.'.join(where)} {model}: an unknown key in params validates")
    rules = counts

    fuzz_dict = subprocess.run(["/usr/bin/python3", str(root / "testbench/fuzz/dict_from_schema.py"), str(root)],
                               check=True, capture_output=True, text=True).stdout.splitlines()
    for path, _ in params:
        for key in path:
            if json.dumps(json.dumps(key)) not in fuzz_dict:
                fail(f"{key} is not in the fuzz dictionary")
    print(f"check_hw_config_schema: {len(good)} configs valid, {checked} bad values and {len(params)} unknown keys "
          f"rejected; {rules[0]} NoC models and {rules[1]} system networks, {noc_checked} bad params values rejected")


if __name__ == "__main__":
    main()
