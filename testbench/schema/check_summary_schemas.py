#!/usr/bin/python3
"""CTest: the JSON Schemas of summary.json (docs/schema/summary.schema.json for `ahbm-sim run`,
serve_summary.schema.json for `ahbm-sim serve`; tools/summary_schema.py).

  check_summary_schemas.py current REPO_ROOT AHBM_SIM
      The committed schemas equal a fresh recording over the probe runs (tools/gen-schemas.sh into
      a temporary folder), are valid draft 2020-12 schemas, and are strict: in a copy of a probe's
      summary, each required key removed, each scalar given another type and an unknown key added
      to each object that is not a map are all rejected; the echoed hardware config is checked
      against hw_config.schema.json.
  check_summary_schemas.py sink REPO_ROOT SINK_DIR
      Every summary.json the e2e tests' CLI runs wrote (copied into SINK_DIR by
      testbench/support/test_support.h) validates against the schema of its kind. Runs after the
      e2e tests (a CTest fixture); it fails naming the file and the first error.
Needs python3-jsonschema (tools/setup.sh)."""
import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

SCHEMAS = {"run": "summary.schema.json", "serve": "serve_summary.schema.json"}


def fail(msg):
    print("check_summary_schemas: " + msg, file=sys.stderr)
    sys.exit(1)


def summary_schema_module(root):
    sys.path.insert(0, str(root / "tools"))
    import summary_schema  # noqa: E402  (tools/summary_schema.py: the recorder and classify())
    return summary_schema


def validators(root):
    """A validator per summary kind, the hardware-config schema reachable by its relative $ref."""
    folder = root / "docs/schema"
    store = {"hw_config.schema.json": json.loads((folder / "hw_config.schema.json").read_text())}
    out = {}
    for kind, name in SCHEMAS.items():
        schema = json.loads((folder / name).read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        out[kind] = jsonschema.Draft202012Validator(schema, resolver=resolver)
    return out


def first_error(v, doc):
    e = next(iter(v.iter_errors(doc)), None)
    return None if e is None else f"at {'.'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:300]}"


def objects(schema, doc, path=()):
    """(path, schema, instance) of every object the schema lists keys of, first instance of each path."""
    if not isinstance(doc, dict) or "properties" not in schema:
        return
    yield path, schema, doc
    for key, sub in schema["properties"].items():
        if key in doc:
            value = doc[key]
            if isinstance(value, list) and value and "items" in sub:
                yield from objects(sub["items"], value[0], path + (key, 0))
            else:
                yield from objects(sub, value, path + (key,))


def another_type(value):
    return "a string" if not isinstance(value, str) else 7


def check_current(root, sim):
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["bash", str(root / "tools/gen-schemas.sh"), sim, tmp], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"tools/gen-schemas.sh failed: {r.stderr.strip()}")
        for name in SCHEMAS.values():
            if json.loads((pathlib.Path(tmp) / name).read_text()) != json.loads((root / "docs/schema" / name).read_text()):
                fail(f"docs/schema/{name} is stale (summary.json changed): run tools/gen-schemas.sh and review the diff")
    vals = validators(root)
    # A probe's summary for the mutations: fanout_8x20 under `auto` writes the policy estimates too.
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        runs = {"run": ["run", "traces/fanout_8x20.json", "--policy", "auto", "--no-vcd", "--trace", "summary"],
                "serve": ["serve", "traces/serve/agentic_mix.json"]}
        for kind, args in runs.items():
            out = pathlib.Path(tmp) / kind
            r = subprocess.run([sim, *args, "--out", str(out)], cwd=root, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"ahbm-sim {' '.join(args)} failed: {r.stderr.strip()}")
            doc = json.loads((out / "summary.json").read_text())
            v = vals[kind]
            err = first_error(v, doc)
            if err:
                fail(f"{SCHEMAS[kind]} rejects a fresh {kind} summary {err}")
            mutated = 0
            for path, schema, obj in objects(v.schema, doc):
                def mutate(change, what):
                    nonlocal mutated
                    m = copy.deepcopy(doc)
                    o = m
                    for p in path:
                        o = o[p]
                    change(o)
                    if v.is_valid(m):
                        fail(f"{SCHEMAS[kind]}: {what} at {'.'.join(map(str, path)) or '(top)'} validates")
                    mutated += 1
                mutate(lambda o: o.__setitem__("no_such_field", 1), "an unknown key")
                for key in schema.get("required", []):
                    mutate(lambda o, k=key: o.pop(k), f"no {key!r}")
                for key, sub in schema["properties"].items():
                    if key in obj and sub.get("type") in ("integer", "number", "string", "boolean"):
                        mutate(lambda o, k=key: o.__setitem__(k, another_type(o[k])), f"{key!r} of another type")
            # The echoed hardware config is checked against its own schema through the $ref.
            m = copy.deepcopy(doc)
            hw = m["config"]["hw"] if kind == "run" else m["hw"]
            hw["clock_ghz"] = -1
            if v.is_valid(m):
                fail(f"{SCHEMAS[kind]}: an echoed hardware config with clock_ghz = -1 validates")
            if mutated < 50:
                fail(f"{SCHEMAS[kind]}: only {mutated} mutations")
            print(f"check_summary_schemas: {SCHEMAS[kind]} current; {mutated} mutated copies of a fresh "
                  f"{kind} summary rejected")


def check_sink(root, sink):
    vals = validators(root)
    classify = summary_schema_module(root).classify
    files = sorted(pathlib.Path(sink).glob("*.json")) if os.path.isdir(sink) else []
    counts = {k: 0 for k in SCHEMAS}
    for f in files:
        doc = json.loads(f.read_text())
        kind = classify(doc)
        err = first_error(vals[kind], doc)
        if err:
            origin = (f.with_suffix(".from").read_text().strip() if f.with_suffix(".from").exists() else "?")
            fail(f"{f.name} (from {origin}) does not validate against {SCHEMAS[kind]} {err}")
        counts[kind] += 1
    print(f"check_summary_schemas: {counts['run']} run and {counts['serve']} serve summaries written by the e2e "
          f"tests validate")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("current", "sink"):
        fail("usage: check_summary_schemas.py current REPO_ROOT AHBM_SIM | sink REPO_ROOT SINK_DIR")
    root = pathlib.Path(sys.argv[2]).resolve()
    if sys.argv[1] == "current":
        check_current(root, sys.argv[3])
    else:
        check_sink(root, sys.argv[3])


if __name__ == "__main__":
    main()
