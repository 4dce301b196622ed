#!/usr/bin/python3
"""The JSON Schemas of the two summary.json files the simulator writes: `ahbm-sim run`'s
(docs/schema/summary.schema.json) and `ahbm-sim serve`'s (docs/schema/serve_summary.schema.json).

summary.json is an output: no parser reads it, so there are no reads to record as for the input
formats (docs/schema/README.md). Its schema is recorded from what the writer writes instead, over
the probe runs listed in docs/schema/probes.sh (which between them open every optional block),
with the few facts a sample cannot show declared here, next to the recording:
  - MAPS: objects keyed by names the run chooses (agents, components, phases, step kinds); their
    values share one schema and any key is allowed;
  - REFS: blocks that echo an input format that has its own schema (the resolved hardware config
    is complete, so it must validate against hw_config.schema.json);
  - ECHOES: blocks that echo a resolved input document with derived fields added (the scenario, the
    serve workload); only "an object" is promised, their format is the input's schema.
Every other object lists exactly the keys the probes wrote: a key written by every probe that has
the object is required, and no other key is allowed, so a summary with a new or renamed field, a
changed type or a dropped block fails validation until the schema is regenerated
(tools/gen-schemas.sh) and the change shows in review.

usage: summary_schema.py run|serve RUN_DIR...   (prints the schema recorded over RUN_DIR/summary.json)
       summary_schema.py classify SUMMARY.json  (prints run or serve)"""
import json
import sys

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Paths are tuples of keys; "*" is any value of a map, "[]" any element of an array.
FORMATS = {
    "run": {
        "id": "summary.schema.json",
        "title": "summary.json of `ahbm-sim run`",
        "description": ("The summary of one simulated scenario (docs/outputs.md). Recorded from the writer's "
                        "output over the probe runs of docs/schema/probes.sh by tools/summary_schema.py "
                        "(tools/gen-schemas.sh); do not edit. Times are simulated ns unless a name says otherwise."),
        "maps": [
            ("agents",), ("busy_ns_by_activity",), ("busy_ns_by_component",), ("busy_ns_by_component", "*"),
            ("energy", "by_component"), ("energy", "by_phase"),
            ("latency", "agents"), ("latency", "agents", "*", "by_phase_ns"), ("latency", "phases"),
            ("latency", "phases", "*", "span_ns_by_activity"), ("latency", "phases", "*", "span_ns_by_class"),
            ("phases",), ("phases", "*", "agents"), ("baselines", "no_sharing", "phases"),
            ("roofline", "by_step_kind"), ("policy", "roofline", "phases"),
            ("noc", "topology", "placement"), ("stats", "noc", "topology", "placement"),
        ],
        "refs": {("config", "hw"): "hw_config.schema.json"},
        "echoes": [("config", "scenario")],
    },
    "serve": {
        "id": "serve_summary.schema.json",
        "title": "summary.json of `ahbm-sim serve`",
        "description": ("The summary of one serving run (docs/serving.md). Recorded from the writer's output over "
                        "the probe runs of docs/schema/probes.sh by tools/summary_schema.py (tools/gen-schemas.sh); "
                        "do not edit. Times are simulated ns unless a name says otherwise."),
        "maps": [],
        "refs": {("hw",): "hw_config.schema.json"},
        "echoes": [("workload",)],
    },
}


def classify(summary):
    """Which writer wrote a summary: serve's has a workload and throughput, run's a scenario name."""
    if isinstance(summary, dict) and "workload" in summary and "throughput" in summary:
        return "serve"
    return "run"


def _json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


class _Recorder:
    def __init__(self, spec):
        self.maps = set(spec["maps"])
        self.refs = spec["refs"]
        self.echoes = set(spec["echoes"])
        self.seen = set()  # declared paths a probe reached: a declaration no probe reaches is stale

    def schema(self, values, path=()):
        """The schema of the values written at `path` (one per probe object that has it)."""
        if path in self.refs:
            self.seen.add(path)
            return {"$ref": self.refs[path]}
        if path in self.echoes:
            self.seen.add(path)
            return {"type": "object"}
        by_type = {}
        for v in values:
            by_type.setdefault(_json_type(v), []).append(v)
        if "integer" in by_type and "number" in by_type:  # a double that printed integral elsewhere
            by_type["number"] += by_type.pop("integer")
        alternatives = []
        for t in sorted(by_type):
            vs = by_type[t]
            if t == "object":
                alternatives.append(self._object(vs, path))
            elif t == "array":
                elements = [e for v in vs for e in v]
                s = {"type": "array"}
                if elements:
                    s["items"] = self.schema(elements, path + ("[]",))
                alternatives.append(s)
            else:
                alternatives.append({"type": t})
        if len(alternatives) == 1:
            return alternatives[0]
        if all(list(a) == ["type"] for a in alternatives):
            return {"type": [a["type"] for a in alternatives]}
        return {"anyOf": alternatives}

    def _object(self, objects, path):
        if path in self.maps:
            self.seen.add(path)
            values = [v for o in objects for v in o.values()]
            s = {"type": "object"}
            if values:
                s["additionalProperties"] = self.schema(values, path + ("*",))
            return s
        keys = sorted({k for o in objects for k in o})
        return {
            "type": "object",
            "properties": {k: self.schema([o[k] for o in objects if k in o], path + (k,)) for k in keys},
            "required": [k for k in keys if all(k in o for o in objects)],
            "additionalProperties": False,
        }


def record(fmt, summaries):
    """The schema of format `fmt` recorded over `summaries` (parsed summary.json documents)."""
    spec = FORMATS[fmt]
    if not summaries:
        raise ValueError(f"no {fmt} summaries to record")
    rec = _Recorder(spec)
    body = rec.schema(summaries)
    stale = (rec.maps | set(rec.refs) | rec.echoes) - rec.seen
    if stale:
        raise ValueError(f"{fmt}: declared path(s) no probe wrote: " + ", ".join(".".join(p) for p in sorted(stale)))
    head = {"$schema": SCHEMA_DIALECT, "$id": spec["id"], "title": spec["title"], "description": spec["description"]}
    return {**head, **body}


def dumps(schema):
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main(argv):
    if len(argv) == 2 and argv[0] == "classify":
        with open(argv[1]) as f:
            print(classify(json.load(f)))
        return 0
    if len(argv) < 2 or argv[0] not in FORMATS:
        print(__doc__.rsplit("usage:", 1)[1].strip(), file=sys.stderr)
        return 2
    summaries = []
    for d in argv[1:]:
        with open(d + "/summary.json") as f:
            s = json.load(f)
        if classify(s) != argv[0]:
            print(f"summary_schema: {d}/summary.json is a {classify(s)} summary, not {argv[0]}", file=sys.stderr)
            return 2
        summaries.append(s)
    try:
        sys.stdout.write(dumps(record(argv[0], summaries)))
    except ValueError as e:
        print("summary_schema: " + str(e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
