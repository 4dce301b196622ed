#!/usr/bin/python3
"""CTest: the generated JSON Schemas of the input formats (docs/schema/{scenario,model_config,
join_input,serve_workload}.schema.json, tools/gen-schemas.sh) are current, valid draft 2020-12 schemas, accept
every probe file they were recorded over, and agree with the parser on bad input: for every field
the schema names, a copy of a probe with that field of the wrong type, out of range, an unknown
name or an unknown key next to it is rejected by the schema AND by the parser (`ahbm-sim schema`
parses its probes: exit 2, the message naming the key).
Needs python3-jsonschema (tools/setup.sh).  usage: check_file_schemas.py REPO_ROOT AHBM_SIM"""
import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

FORMATS = [("scenario", "scenario_probes", "scenario.schema.json"),
           ("model-config", "model_config_probes", "model_config.schema.json"),
           ("join-input", "join_input_probes", "join_input.schema.json"),
           ("serve-workload", "serve_workload_probes", "serve_workload.schema.json")]


def fail(msg):
    print("check_file_schemas: " + msg, file=sys.stderr)
    sys.exit(1)


def probes(root, var):
    out = subprocess.run(["bash", "-c", f'source docs/schema/probes.sh; printf "%s\\n" "${{{var}[@]}}"'], cwd=root,
                         check=True, capture_output=True, text=True).stdout.split()
    if not out:
        fail(f"no probes in {var}")
    return out


def leaves(schema, path=()):
    """(path, schema) of every field; array elements are the path element "[]"."""
    for key, sub in schema.get("properties", {}).items():
        yield path + (key,), sub
        if sub.get("type") == "object":
            yield from leaves(sub, path + (key,))
        if sub.get("type") == "array" and "items" in sub:
            yield from leaves(sub["items"], path + (key, "[]"))


def resolve(doc, path):
    """The object holding path[-1] (arrays: their first element), or None."""
    for key in path[:-1]:
        if key == "[]":
            if not isinstance(doc, list) or not doc:
                return None
            doc = doc[0]
        elif isinstance(doc, dict) and key in doc:
            doc = doc[key]
        else:
            return None
    return doc if isinstance(doc, dict) else None


def anchor(doc, folder):
    """Files a document names relative to itself (a scenario's model.config and join.results, a
    workload's scenario and arrival.file) made absolute, so a copy elsewhere names the same files."""
    for block, key in (("model", "config"), ("join", "results"), (None, "scenario"), ("arrival", "file")):
        o = doc if block is None else doc.get(block)
        if isinstance(o, dict) and isinstance(o.get(key), str) and not os.path.isabs(o[key]):
            p = folder / o[key]
            if p.exists():
                o[key] = str(p)


def bad_values(prop):
    t = prop.get("type")
    out = []
    if t in ("integer", "number"):
        out.append("a string")
        if "minimum" in prop and prop["minimum"] > -2**53:
            out.append(prop["minimum"] - 1)
        if "maximum" in prop and prop["maximum"] < 2**53:
            out.append(prop["maximum"] + 1)
        if t == "integer":
            out.append(1.5)
    elif t == "string":
        out.append(7)
        if "enum" in prop:
            out.append("no_such_value")
        if "pattern" in prop:
            out.append("not a name!")
    elif t == "boolean":
        out.append("yes")
    elif t == "object":
        out.append([1])
    elif t == "array":
        out.append({"not": "an array"})
    return out


def main():
    root, sim = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    total_bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, var, name in FORMATS:
            files = probes(root, var)
            fresh = subprocess.run([sim, "schema", fmt, *files], cwd=root, env=env, capture_output=True, text=True)
            if fresh.returncode != 0:
                fail(f"ahbm-sim schema {fmt} failed: {fresh.stderr.strip()}")
            committed = json.loads((root / "docs/schema" / name).read_text())
            if json.loads(fresh.stdout) != committed:
                fail(f"docs/schema/{name} is stale: run tools/gen-schemas.sh")
            jsonschema.Draft202012Validator.check_schema(committed)
            v = jsonschema.Draft202012Validator(committed)
            docs = {f: json.loads((root / f).read_text()) for f in files}
            for f, d in docs.items():
                errors = [e.message for e in v.iter_errors(d)]
                if errors:
                    fail(f"{f} does not validate against {name}: {errors[0]}")
                c = dict(d, _comment="free text")
                if not v.is_valid(c):
                    fail(f"{name} rejects a _comment key")
            fields = list(leaves(committed))
            if len(fields) < 5:
                fail(f"only {len(fields)} fields in {name}")
            covered = 0
            for path, prop in fields:
                holder = next(((f, d) for f, d in docs.items() if (o := resolve(d, path)) is not None and path[-1] in o),
                              None)
                if holder is None:
                    continue  # read only inside a block no probe gives this field in (its siblings are checked)
                covered += 1
                f, d = holder
                mutations = [(path[-1], b) for b in bad_values(prop)] + [("no_such_key", 1)]
                for key, value in mutations:
                    m = copy.deepcopy(d)
                    resolve(m, path)[key] = value
                    if v.is_valid(m):
                        fail(f"{name}: {'.'.join(path[:-1] + (key,))} = {value!r} (in a copy of {f}) validates")
                    # The parser, on the copy in a temporary folder (files it names made absolute).
                    anchor(m, (root / f).parent)
                    tmp_path = pathlib.Path(tmp) / f"mutated{total_bad}.json"
                    tmp_path.write_text(json.dumps(m))
                    r = subprocess.run([sim, "schema", fmt, str(tmp_path)], cwd=root, env=env, capture_output=True,
                                       text=True)
                    if r.returncode != 2 or key not in r.stderr:
                        fail(f"{fmt} parser: {'.'.join(path[:-1] + (key,))} = {value!r} (in a copy of {f}) gave exit "
                             f"{r.returncode}, expected 2: {r.stderr.strip()}")
                    total_bad += 1
            if covered < len(fields) // 2:
                fail(f"{name}: the probes give only {covered} of {len(fields)} fields a value")
            print(f"check_file_schemas: {name}: {len(files)} probes valid, {covered} of {len(fields)} fields mutated")
    print(f"check_file_schemas: {total_bad} bad documents rejected by schema and parser alike")


if __name__ == "__main__":
    main()
