#!/usr/bin/python3
"""Prints the libFuzzer dictionary: testbench/fuzz/json.dict (JSON syntax, scenario keys) plus
every key and enum name of the hardware-config and scenario schemas (docs/schema/, generated from
the parameter table in hw/common/config/hw_config.h, the NoC models' tables and the scenario
parser's reads), NoC model names and noc.params keys included, so a new
parameter or scenario field is fuzzed without editing the dictionary.
usage: dict_from_schema.py [REPO_ROOT]"""
import json
import pathlib
import sys


def schema_words(node, out):
    for key, sub in node.get("properties", {}).items():
        out.append(key)
        out.extend(v for v in sub.get("enum", []) if isinstance(v, str))
        schema_words(sub, out)
        schema_words(sub.get("items", {}), out)
    for rule in node.get("allOf", []):  # noc: each model's noc.params, under "if model is X then"
        out.extend(v for v in rule.get("if", {}).get("properties", {}).get("model", {}).values() if isinstance(v, str))
        schema_words(rule.get("then", {}), out)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    lines = (root / "testbench/fuzz/json.dict").read_text().splitlines()
    seen = {l for l in lines if l and not l.startswith("#")}
    words = []
    for name in ("hw_config.schema.json", "scenario.schema.json"):
        schema_words(json.loads((root / "docs/schema" / name).read_text()), words)
    lines.append("# generated from docs/schema/hw_config.schema.json and scenario.schema.json")
    for w in words:
        entry = json.dumps(json.dumps(w))  # the quoted key, quoted again as a dictionary entry
        if entry not in seen:
            seen.add(entry)
            lines.append(entry)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
