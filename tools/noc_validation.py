#!/usr/bin/python3
"""Measures the tables of docs/noc-validation.md with `ahbm-sim noc-bench`: saturation points and
load-latency curves per router preset, topology and traffic pattern, and the saturation of a 4x4
mesh under uniform traffic per router change. Deterministic (fixed seeds): the same binary
prints the same tables.

Usage: tools/noc_validation.py BUILD/bin/ahbm-sim [--cycles N] [--only TOPOLOGY,...] [--no-changes]
                               [--no-curves] [--routing] > tables.md
(TOPOLOGY: mesh16, mesh64, torus16, torus64, cmesh64, flatfly16, ring16, crossbar16; --no-changes skips the per-change
tables, --no-curves the saturation and load-latency table; --routing adds the saturation of a 4x4
mesh per routing algorithm, uniform and transpose)
"""
import json
import subprocess
import sys
import tempfile

ahbm = sys.argv[1]
cycles = int(sys.argv[sys.argv.index("--cycles") + 1]) if "--cycles" in sys.argv else 5000
only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None


def bench(args):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([ahbm, "noc-bench", *args, "--cycles", str(cycles), "--warmup", "1000", "--out", f.name],
                       check=True, stdout=subprocess.DEVNULL)
        return json.load(open(f.name))


def saturation_mesh16(params):
    args = ["--noc", "mesh", "--nodes", "16", "--traffic", "uniform", "--packet-flits", "1",
            "--params", json.dumps({"vcs": 4, "buffer_flits": 4, **params}), "--saturation"]
    return bench(args)["saturation"]["rate"]


TOPOLOGIES = [("4x4 mesh", "mesh", 16), ("8x8 mesh", "mesh", 64), ("4x4 torus", "torus", 16),
              ("8x8 torus", "torus", 64), ("4x4 cmesh, c = 4", "cmesh", 64), ("4x4 flatfly", "flatfly", 16),
              ("16-node ring", "ring", 16), ("16-port crossbar", "crossbar", 16)]
TRAFFIC = ["uniform", "transpose", "bitcomp"]
PRESETS = ["classic", "booksim-iq"]

curves = "--no-curves" not in sys.argv
if curves:
    print(f"Measured with `tools/noc_validation.py` ({cycles}-cycle windows after 1000 warm-up cycles, seed 1, "
          "4-flit packets, rates in flits/node/cycle).\n")
    print("### Saturation and load-latency\n")
    print("Average latency (cycles, creation to tail arrival) at 10, 50 and 90 % of the saturation rate found by "
          "`--saturation` (bisection to 0.01).\n")
    print("| topology | traffic | preset | zero-load-ish latency (rate 0.01) | saturation rate | lat @ 10 % | lat @ 50 % | lat @ 90 % |")
    print("|---|---|---|---|---|---|---|---|")
    for name, model, nodes in TOPOLOGIES:
        if only and f"{model}{nodes}" not in only:
            continue
        for traffic in TRAFFIC:
            for preset in PRESETS:
                base = ["--noc", model, "--nodes", str(nodes), "--traffic", traffic, "--param", f"router={preset}"]
                sat = bench(base + ["--saturation"])["saturation"]
                rate = sat["rate"]
                low = bench(base + ["--rate", "0.01"])["avg_latency_cycles"]
                lats = [bench(base + ["--rate", f"{f * rate:.4f}"])["avg_latency_cycles"] for f in (0.1, 0.5, 0.9)]
                print(f"| {name} | {traffic} | {preset} | {low:.1f} | {rate:.3f} (saturated at {sat['saturated_at']:.3f}) | "
                      + " | ".join(f"{l:.1f}" for l in lats) + " |")
            sys.stdout.flush()

if "--routing" in sys.argv:
    print("\n### Routing (4x4 mesh, 1-flit packets, 4 VCs x 4 flits)\n")
    print("| routing | traffic | classic | booksim-iq |")
    print("|---|---|---|---|")
    for traffic in ["uniform", "transpose"]:
        for routing in ["dor", "o1turn", "valiant", "min_adapt"]:
            rates = []
            for preset in PRESETS:
                args = ["--noc", "mesh", "--nodes", "16", "--traffic", traffic, "--packet-flits", "1", "--params",
                        json.dumps({"router": preset, "vcs": 4, "buffer_flits": 4, "routing": routing}), "--saturation"]
                rates.append(bench(args)["saturation"]["rate"])
            print(f"| {routing} | {traffic} | " + " | ".join(f"{r:.3f}" for r in rates) + " |")
            sys.stdout.flush()

if "--no-changes" in sys.argv:
    sys.exit(0)
print("\n### What each router change costs (4x4 mesh, uniform, 1-flit packets, 4 VCs x 4 flits)\n")
print("| router | saturation rate | change vs previous row |")
print("|---|---|---|")
steps = [
    ("classic (lumped pipeline, greedy allocator, lowest free VC)", {}),
    ("+ VC allocation as a stage of its own (staged pipeline 1+1+1+1)", {"pipeline": "staged"}),
    ("+ separable input-first switch allocator, one iteration", {"pipeline": "staged", "sw_allocator": "input-first"}),
    ("+ round-robin VC selection", {"pipeline": "staged", "sw_allocator": "input-first", "vc_select": "round-robin"}),
    ("+ iSLIP instead of input-first (one iteration)",
     {"pipeline": "staged", "sw_allocator": "islip", "vc_select": "round-robin"}),
    ("+ injection channel 2 cycles, credit delay 1 (= booksim-iq with 4 VCs x 4 flits)",
     {"router": "booksim-iq"}),
]
prev = None
for label, params in steps:
    rate = saturation_mesh16(params)
    delta = "" if prev is None else f"{100 * (rate / prev - 1):+.1f} %"
    print(f"| {label} | {rate:.3f} | {delta} |")
    sys.stdout.flush()
    prev = rate

print("\n### Switch allocators and input speedup (4x4 mesh, uniform, 1-flit packets, booksim-iq with 4 VCs x 4 flits)\n")
print("| switch allocator | saturation rate | vs iSLIP, one iteration (booksim-iq) |")
print("|---|---|---|")
allocators = [
    ("iSLIP, 1 iteration (booksim-iq)", {}),
    ("iSLIP, 2 iterations", {"alloc_iters": 2}),
    ("iSLIP, 4 iterations", {"alloc_iters": 4}),
    ("separable input-first, 1 iteration", {"sw_allocator": "input-first"}),
    ("separable input-first, 2 iterations", {"sw_allocator": "input-first", "alloc_iters": 2}),
    ("separable output-first (pointers move on every grant), 1 iteration", {"sw_allocator": "output-first"}),
    ("separable output-first, 2 iterations", {"sw_allocator": "output-first", "alloc_iters": 2}),
    ("wavefront", {"sw_allocator": "wavefront"}),
    ("iSLIP, 1 iteration, input speedup 2", {"input_speedup": 2}),
    ("input-first, 1 iteration, input speedup 2", {"sw_allocator": "input-first", "input_speedup": 2}),
    ("greedy (maximal, retries an input's other VCs)", {"sw_allocator": "greedy"}),
]
base = None
for label, params in allocators:
    rate = saturation_mesh16({"router": "booksim-iq", **params})
    base = rate if base is None else base
    delta = f"{100 * (rate / base - 1):+.1f} %" if params else ""
    print(f"| {label} | {rate:.3f} | {delta} |")
    sys.stdout.flush()
