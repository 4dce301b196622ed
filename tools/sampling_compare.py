#!/usr/bin/env python3
"""Compares a sampled serve run with an exact one (docs/serving.md, "Sampled serving").

  /usr/bin/python3 tools/sampling_compare.py EXACT_DIR SAMPLED_DIR [SAMPLED_DIR ...] [--json]

Prints, for every headline metric of the sampled summary's "sampling" block, the exact value,
the sampled value, their relative difference and whether the exact value lies inside the
sampled run's 95% interval. With several sampled runs (seeds): per metric the largest |difference|
and how many of the runs' intervals hold the exact value. --json: the comparisons as JSON on
stdout. Exit 2 on bad input.
"""
import json
import sys


def exact_value(summary, name):
    """The value of headline metric `name` ("requests.ttft_p50_ns", ...) in an exact summary."""
    section, key = name.split(".", 1)
    if section == "requests":
        stat, q, unit = key.rsplit("_", 2)  # ttft_p50_ns -> ttft, p50, ns
        return summary["requests"][stat][q + "_" + unit]
    return summary[section][key]


def compare(exact, sampled):
    block = sampled.get("sampling")
    if block is None:
        raise ValueError("the sampled summary has no \"sampling\" block (run serve with --sampling)")
    rows = []
    for name, m in block["metrics"].items():
        e = exact_value(exact, name)
        v = m["value"]
        lo, hi = m["ci95"]
        rel = (v - e) / e if e else (0.0 if v == e else float("inf"))
        rows.append({"metric": name, "exact": e, "sampled": v, "relative_difference": rel,
                     "ci95": [lo, hi], "exact_inside": lo <= e <= hi})
    return {"detailed_fraction": block["detailed_fraction"], "metrics": rows}


def main(argv):
    args = [a for a in argv[1:] if a != "--json"]
    if len(args) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        exact = json.load(open(args[0] + "/summary.json"))
        runs = [compare(exact, json.load(open(d + "/summary.json"))) for d in args[1:]]
    except (OSError, ValueError, KeyError) as e:
        print(f"sampling_compare: {e}", file=sys.stderr)
        return 2
    if "--json" in argv:
        print(json.dumps(runs if len(runs) > 1 else runs[0], indent=1))
        return 0
    if len(runs) > 1:
        fractions = ", ".join(f"{r['detailed_fraction']:.3f}" for r in runs)
        print(f"{len(runs)} sampled runs; detailed fractions {fractions}")
        print(f"{'metric':32s} {'exact':>14s} {'max |diff|':>10s}  exact inside the 95% interval")
        for i, m in enumerate(runs[0]["metrics"]):
            worst = max(abs(r["metrics"][i]["relative_difference"]) for r in runs)
            inside = sum(r["metrics"][i]["exact_inside"] for r in runs)
            print(f"{m['metric']:32s} {m['exact']:14.6g} {100 * worst:9.2f}%  {inside} of {len(runs)}")
        return 0
    out = runs[0]
    print(f"detailed fraction {out['detailed_fraction']:.3f}")
    print(f"{'metric':32s} {'exact':>14s} {'sampled':>14s} {'diff':>8s}  inside 95% interval")
    for r in out["metrics"]:
        print(f"{r['metric']:32s} {r['exact']:14.6g} {r['sampled']:14.6g} {100 * r['relative_difference']:7.2f}%  "
              f"{'yes' if r['exact_inside'] else 'NO'} [{r['ci95'][0]:.6g}, {r['ci95'][1]:.6g}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
