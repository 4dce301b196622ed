"""Runs ahbm_bench case by case (one process each, so peak RSS is per case) and prints the report."""
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

CASES = [
    # reuse:1 = one Simulator for every iteration (chip elaborated once, as the CLI's steps and
    # sweeps of one config run); reuse:0 = a new chip per run (simulate()).
    "BM_Default/values:1/reuse:1", "BM_Default/values:0/reuse:1",
    "BM_Default/values:1/reuse:0", "BM_Default/values:0/reuse:0",
    "BM_BlasBound/agents:8/prefix:8192", "BM_Reference",
    *[f"BM_PrefixScaling/prefix:{p}/values:{v}" for v in (1, 0) for p in (2048, 8192, 32768, 65536)],
    *[f"BM_AgentScaling/agents:{a}/values:{v}" for v in (1, 0) for a in (1, 8, 32, 64)],
    "BM_GroupScaling/groups:1", "BM_GroupScaling/groups:8",
    "BM_PesPerCube/pes:4", "BM_PesPerCube/pes:8", "BM_PesPerCube/pes:16",
    "BM_HbmModel/banked:0", "BM_HbmModel/banked:1",
    # The NoC flit engine alone (noc-bench, 8x8 mesh): classic / booksim-iq at low and moderate load.
    *[f"BM_FlitEngine/booksim:{b}/load:{l}" for b in (0, 1) for l in (50, 300)],
    # LLaMA-3-8B as a whole model, timing only: every layer of every step (issue 16), one run.
    "BM_Llama3_8bWholeModel/iterations:1",
]


def run_case(binary, name, min_time):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1", OPENBLAS_NUM_THREADS="1")
        subprocess.run([binary, f"--benchmark_filter=^{name}$", f"--benchmark_min_time={min_time}",
                        "--benchmark_format=json", f"--benchmark_out={out.name}"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        data = json.load(open(out.name))
    runs = [b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    if not runs:
        raise SystemExit(f"benchmark {name} did not run")
    return runs[0], data["context"]


# Whole-process cases (issue 20): `ahbm-sim run` from process start to the last byte written, as
# a user runs it (one BLAS thread: the load-time OpenBLAS workers are shut down), VCD off. Each: name,
# scenario (relative to the repository), extra options, the output level it writes, runs.
WHOLE = [
    ("default (values)", "traces/fanout_8x20.json", [], "auto = tile", 5),
    ("decode_heavy (values)", "traces/decode_heavy.json", [], "auto = tile", 3),
    ("llama_gqa (values)", "traces/llama_gqa.json", [], "auto = tile", 3),
    ("llama8b timing-only", "traces/bench/llama8b_fanout_32k.json", ["--no-values"], "auto = step", 3),
    ("llama8b timing-only, tile", "traces/bench/llama8b_fanout_32k.json", ["--no-values", "--trace", "tile"], "tile", 2),
    ("llama8b timing-only, tile, gz", "traces/bench/llama8b_fanout_32k.json",
     ["--no-values", "--trace", "tile", "--trace-gz"], "tile (gz)", 2),
]


def run_whole(sim, root, scenario, extra, runs, command="run"):
    """Best wall time of `runs` runs of `ahbm-sim COMMAND`, with that run's peak RSS, the bytes it
    wrote and its summary.json."""
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        env.pop("OPENBLAS_NUM_THREADS", None)  # as a user starts it
        for _ in range(runs):
            start = time.perf_counter()
            cmd = [sim, command, os.path.join(root, scenario), "--out", out, *extra]
            if command == "run":
                cmd.append("--no-vcd")
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(p.pid, 0)
            wall = time.perf_counter() - start
            err = p.stderr.read().decode()
            p.stderr.close()
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"ahbm-sim {command} {scenario} failed: {err}")
            written = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
            r = {"wall_ms": wall * 1e3, "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1e3,
                 "peak_MiB": usage.ru_maxrss / 1024, "written_MB": written / 1e6}
            if best is None or r["wall_ms"] < best["wall_ms"]:
                best = r
                with open(os.path.join(out, "summary.json")) as f:
                    best["summary"] = json.load(f)
    return best


# The serving benchmark (issue 17): the large shape, 1,000 workflows of 8-way fan-out over
# 3 rounds, served timing-only in one process (several minutes each): with LLaMA-3-8B-sized
# attention, and on the whole LLaMA-3-8B (every layer's weight GEMMs in every step). Both with the
# step cache off: under load no step repeats (docs/serving.md).
SERVE = [("attention only", "traces/serve/llama8b_agentic.json"),
         ("whole model", "traces/serve/llama8b_whole_agentic.json")]


def serve_benchmark(sim, root):
    res = {}
    for name, workload in SERVE:
        r = run_whole(sim, root, workload, [], 1, command="serve")
        s = r.pop("summary")
        st = s["steps"]
        r.update({"workload": workload, "workflows": s["workflows"]["count"], "steps": st["count"],
                  "steps_simulated": st["simulated"], "steps_reused": st["reused"], "simulated_s": s["end_ns"] / 1e9})
        print(f"serve {workload} ({name}): {r['workflows']} workflows, {r['steps']} steps "
              f"({r['steps_simulated']} simulated, {r['steps_reused']} reused), {r['simulated_s']:.3f} s simulated")
        print(f"  {r['wall_ms'] / 1e3:.1f} s wall, {r['cpu_ms'] / 1e3:.1f} s CPU, peak {r['peak_MiB']:.0f} MiB, "
              f"{r['written_MB']:.1f} MB written  [target: under 600 s wall on 2 cores]", flush=True)
        res[name] = r
    return res


def whole_process(sim, root, blas_ms):
    print(f"\nwhole process (ahbm-sim run ... --no-vcd; best of N), float32 BLAS bound of the default "
          f"scenario measured in this run: {blas_ms:.2f} ms")
    print(f"{'case':32s} {'level':12s} {'wall ms':>9s} {'cpu ms':>9s} {'x BLAS':>7s} {'peak MiB':>9s} {'written MB':>11s}")
    res = {}
    for name, scenario, extra, level, runs in WHOLE:
        r = run_whole(sim, root, scenario, extra, runs)
        r["level"] = level
        res[name] = r
        print(f"{name:32s} {level:12s} {r['wall_ms']:9.1f} {r['cpu_ms']:9.1f} {r['wall_ms'] / blas_ms:7.1f} "
              f"{r['peak_MiB']:9.1f} {r['written_MB']:11.1f}")
    d, l8, l8t = res["default (values)"], res["llama8b timing-only"], res["llama8b timing-only, tile"]
    print(f"default scenario, values: {d['wall_ms']:.1f} ms wall = {d['wall_ms'] / blas_ms:.1f} x the BLAS bound  [target <= 4]")
    print(f"LLaMA-8B-sized fan-out, timing-only, default level: {l8['wall_ms'] / 1e3:.2f} s  [target <= 1.5 s], "
          f"{l8['written_MB']:.1f} MB written  [target <= 100 MB]; full tile traces: {l8t['wall_ms'] / 1e3:.2f} s  "
          f"[target <= 4 s]")
    return res


def ms(b, key="cpu_time"):
    """Milliseconds of CPU time by default: the host may be shared, and CPU time of a
    single-threaded run is what it costs; wall time is printed next to it."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    return b[key] * scale


def slope(points):
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main():
    binary = sys.argv[1]
    sim = os.path.join(os.path.dirname(binary), "ahbm-sim")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    quick = "--quick" in sys.argv
    json_out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    if "--serve" in sys.argv:  # the serving benchmark alone
        r = serve_benchmark(sim, root)
        if json_out:
            json.dump({"serve": r}, open(json_out, "w"), indent=2)
        return
    if "--whole" in sys.argv:  # the whole-process cases alone, with the BLAS bound they are compared to
        blas, context = run_case(binary, "BM_BlasBound/agents:8/prefix:8192", "0.05" if quick else "0.5")
        whole = whole_process(sim, root, ms(blas))
        if json_out:
            json.dump({"context": context, "blas_bound_ms": ms(blas), "whole_process": whole},
                      open(json_out, "w"), indent=2)
        return
    results, context = {}, None
    for name in CASES:
        results[name], context = run_case(binary, name, "0.05" if quick else "0.5")
    print(f"# ahbm-sim benchmarks on {platform.node()}: {context['num_cpus']} CPUs at "
          f"{context['mhz_per_cpu']} MHz, {platform.platform()}")
    print(f"{'case':42s} {'cpu ms':>9s} {'wall ms':>9s} {'Mcycles/s':>10s} {'tensors MiB':>12s} "
          f"{'peak MiB':>9s} {'added MiB':>9s}")
    for name, b in results.items():
        cyc = b.get("sim_cycles_per_s", 0) / 1e6
        added = b.get("peak_rss_MiB", 0) - b.get("base_rss_MiB", 0)
        print(f"{name:42s} {ms(b):9.2f} {ms(b, 'real_time'):9.2f} {cyc:10.1f} {b.get('tensor_MiB', 0):12.1f} "
              f"{b.get('peak_rss_MiB', 0):9.1f} {added:9.1f}")

    def series(prefix, values):
        return [(int(n.split("/")[1].split(":")[1]), ms(b)) for n, b in results.items()
                if n.startswith(prefix) and n.endswith(f"values:{values}")]

    values, timing = ms(results["BM_Default/values:1/reuse:1"]), ms(results["BM_Default/values:0/reuse:1"])
    values_new, timing_new = ms(results["BM_Default/values:1/reuse:0"]), ms(results["BM_Default/values:0/reuse:0"])
    blas = ms(results["BM_BlasBound/agents:8/prefix:8192"])
    ref = ms(results["BM_Reference"])
    d = results["BM_Default/values:1/reuse:1"]
    speedups = {f"prefix {p}": v / t for (p, v), (_, t) in
                zip(series("BM_PrefixScaling", 1), series("BM_PrefixScaling", 0))}
    speedups.update({f"agents {a}": v / t for (a, v), (_, t) in
                     zip(series("BM_AgentScaling", 1), series("BM_AgentScaling", 0))})
    summary = {
        "values_over_blas": values / blas,
        "timing_only_speedup": values / timing,
        "values_over_blas_new_chip": values_new / blas,
        "timing_only_speedup_new_chip": values_new / timing_new,
        "timing_only_speedup_series": speedups,
        "prefix_exponent": slope(series("BM_PrefixScaling", 1)),
        "agents_exponent": slope(series("BM_AgentScaling", 1)),
        "prefix_exponent_timing_only": slope(series("BM_PrefixScaling", 0)),
        "agents_exponent_timing_only": slope(series("BM_AgentScaling", 0)),
        "reference_ms": ref,
        "default_peak_over_tensors": d["peak_rss_MiB"] / d["tensor_MiB"],
        "default_added_over_tensors": (d["peak_rss_MiB"] - d["base_rss_MiB"]) / d["tensor_MiB"],
    }
    print()
    print(f"default scenario, values, VCD off: {values:.2f} ms = {summary['values_over_blas']:.2f} x the "
          f"float32 BLAS bound ({blas:.2f} ms)  [target <= 2]")
    print(f"timing-only: {timing:.3f} ms, {summary['timing_only_speedup']:.1f} x faster than values  [target >= 50]")
    print(f"with a new chip per run (simulate()): values {values_new:.2f} ms "
          f"({summary['values_over_blas_new_chip']:.2f} x BLAS), timing-only {timing_new:.3f} ms "
          f"({summary['timing_only_speedup_new_chip']:.1f} x)")
    print("timing-only speed-up along the series: " +
          ", ".join(f"{k}: {v:.0f}x" for k, v in speedups.items()))
    print(f"wall time ~ prefix^{summary['prefix_exponent']:.2f}, ~ agents^{summary['agents_exponent']:.2f}  "
          f"[target <= 1]; timing-only ~ prefix^{summary['prefix_exponent_timing_only']:.2f}, "
          f"~ agents^{summary['agents_exponent_timing_only']:.2f}")
    print(f"float64 reference check (runtime, outside simulate()): {ref:.2f} ms")
    w = results["BM_Llama3_8bWholeModel/iterations:1"]
    summary["llama3_8b_whole_model_wall_s"] = ms(w, "real_time") / 1e3
    summary["llama3_8b_whole_model_sim_macs_per_s"] = w["sim_macs_per_s"]
    print(f"LLaMA-3-8B whole model (traces/llama3_8b_agentic.json, timing-only): {ms(w, 'real_time') / 1e3:.2f} s wall "
          f"for {w['sim_ns'] / 1e6:.1f} ms simulated, {w['sim_macs']:.3g} MACs = {w['sim_macs_per_s']:.3g} simulated MAC/s")
    print(f"peak RSS / tensor bytes (default): {summary['default_peak_over_tensors']:.2f} whole process, "
          f"{summary['default_added_over_tensors']:.2f} added by the case  [target <= 2]")
    whole = whole_process(sim, root, blas)
    if json_out:
        json.dump({"context": context, "summary": summary, "whole_process": whole,
                   "cases": {n: {"cpu_ms": ms(b), "wall_ms": ms(b, "real_time"), **{k: b[k] for k in b if k in (
                       "sim_ns", "sim_cycles_per_s", "tensor_MiB", "peak_rss_MiB", "base_rss_MiB", "sim_macs", "sim_macs_per_s")}}
                             for n, b in results.items()}},
                  open(json_out, "w"), indent=2)


if __name__ == "__main__":
    main()
