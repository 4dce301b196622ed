#!/usr/bin/python3
"""The Python module `ahbm` (tools/python/ahbm_module.cpp, docs/python.md) against the CLI it wraps:
same simulated times and O, spans that pandas takes as they are, errors as exceptions with the
CLI's field-path messages, chips reused across runs, in-process sweeps giving the CLI's results.
Run by CTest with PYTHONPATH = the build's python/ and AHBM_CLI = the build's ahbm-sim."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import pandas as pd

import ahbm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["AHBM_CLI"]
FANOUT = os.path.join(ROOT, "traces", "fanout_8x20.json")


def cli_run(scenario, out, *args):
    subprocess.run([CLI, "run", scenario, "--out", out, *args], check=True, capture_output=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


class ModuleCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ahbm-py-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_version_is_the_cli_version(self):
        out = subprocess.run([CLI, "--version"], check=True, capture_output=True, text=True).stdout
        self.assertEqual(out.strip(), f"ahbm-sim {ahbm.__version__} (commit {ahbm.commit})")

    def test_fanout_matches_the_cli_total_and_o(self):
        cli_dir = os.path.join(self.dir, "cli")
        summary = cli_run(FANOUT, cli_dir, "--dump-tensors", "--no-vcd")
        r = ahbm.run(FANOUT)
        self.assertEqual(r["summary"]["total_ns"], summary["total_ns"])
        self.assertEqual(r["summary"]["numerics"], summary["numerics"])
        o_cli = np.load(os.path.join(cli_dir, "tensors", "o.npy"))
        self.assertEqual(r["o"][0].dtype, np.float32)
        self.assertEqual(r["o"][0].shape, o_cli.shape)
        np.testing.assert_array_equal(r["o"][0], o_cli)  # the same arithmetic: bit-identical
        # The spans are latency.csv's rows, as columns pandas takes directly.
        df = pd.DataFrame(r["spans"])
        csv = pd.read_csv(os.path.join(cli_dir, "latency.csv"), float_precision="round_trip")
        self.assertEqual(len(df), len(csv))
        self.assertEqual(list(df.columns), list(csv.columns))
        self.assertEqual(df["end_ns"].max(), summary["total_ns"])
        self.assertTrue((df["end_ns"] >= df["start_ns"]).all())
        # In the file's row order (by start time, ties in recording order), with its types; the
        # times are the simulator's doubles, the file's are rounded to the picosecond.
        self.assertEqual(list(df.dtypes), list(csv.dtypes))
        for c in ("component", "activity", "phase", "agent", "rows", "bytes"):
            self.assertEqual(df[c].tolist(), csv[c].tolist(), c)
        for c in ("start_ns", "end_ns"):
            np.testing.assert_allclose(df[c].to_numpy(), csv[c].to_numpy(), rtol=0, atol=5e-4)
        self.assertTrue(df["start_ns"].is_monotonic_increasing)

    def test_dict_scenario_and_hw_with_overrides(self):
        with open(FANOUT) as f:
            sc = json.load(f)
        slow = ahbm.run(sc, {"pe": {"hbm": {"bandwidth_gbps": 3.2}}}, values=False)
        base = ahbm.run(sc, values=False)
        via_set = ahbm.run(sc, set=["pe.hbm.bandwidth_gbps=3.2"], values=False)
        self.assertEqual(slow["summary"]["total_ns"], via_set["summary"]["total_ns"])
        self.assertGreater(slow["summary"]["total_ns"], base["summary"]["total_ns"])
        self.assertTrue(all(o.size == 0 for o in base["o"]))  # timing only: no values computed

    def test_run_options_of_the_cli(self):
        # launch, compare_unbatched, trace, trace_gz do what ahbm-sim run's flags do.
        cli_dir = os.path.join(self.dir, "cli_opts")
        summary = cli_run(FANOUT, cli_dir, "--no-vcd", "--no-values", "--compare-unbatched")
        r = ahbm.run(FANOUT, values=False, compare_unbatched=True)
        self.assertEqual(r["summary"]["baselines"], summary["baselines"])
        self.assertIn("no_sharing", r["summary"]["baselines"])
        gqa = os.path.join(ROOT, "traces", "llama_gqa.json")  # 8 KV heads: one launch each
        summary = cli_run(gqa, os.path.join(self.dir, "cli_gqa"), "--no-vcd", "--no-values", "--launch", "per-head")
        r = ahbm.run(gqa, values=False, launch="per-head")
        self.assertEqual(r["summary"]["policy"]["decision"]["launch"], summary["policy"]["decision"]["launch"])
        self.assertEqual(r["summary"]["policy"]["decision"]["launch"]["kernels"], 8)
        self.assertEqual(r["summary"]["total_ns"], summary["total_ns"])
        out = os.path.join(self.dir, "py_gz")
        ahbm.run(FANOUT, values=False, out=out, trace="step", trace_gz=True)
        self.assertTrue(os.path.exists(os.path.join(out, "trace.json.gz")))
        self.assertFalse(os.path.exists(os.path.join(out, "trace.json")))
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(FANOUT, values=False, launch="sometimes")
        self.assertIn("sometimes", str(e.exception))
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(FANOUT, values=False, trace="everything")
        self.assertIn("everything", str(e.exception))
        # gemm_mapping: as --gemm-mapping, on a whole model given inline (one tiny layer).
        tiny = os.path.join(ROOT, "testbench", "fuzz", "corpus", "scenario", "every_block_alt.json")
        summary = cli_run(tiny, os.path.join(self.dir, "cli_xs"), "--no-vcd", "--gemm-mapping", "x_stationary")
        r = ahbm.run(tiny, gemm_mapping="x_stationary")
        self.assertEqual(r["summary"]["operators"]["mapping"], "x_stationary")
        self.assertEqual(r["summary"]["operators"], summary["operators"])
        self.assertEqual(r["summary"]["total_ns"], summary["total_ns"])
        self.assertNotEqual(ahbm.run(tiny)["summary"]["total_ns"], r["summary"]["total_ns"])
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(tiny, gemm_mapping="diagonal")
        self.assertIn("gemm_mapping", str(e.exception))
        self.assertIn("diagonal", str(e.exception))
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(FANOUT, values=False, gemm_mapping="x_stationary")  # attention only: no weight GEMMs
        self.assertIn("whole model", str(e.exception))
        # power_window_ns: as --power-window-ns (the power-over-time windows).
        summary = cli_run(FANOUT, os.path.join(self.dir, "cli_pw"), "--no-vcd", "--no-values", "--power-window-ns", "200")
        r = ahbm.run(FANOUT, values=False, power_window_ns=200)
        self.assertEqual(r["summary"]["power"], summary["power"])
        self.assertEqual(r["summary"]["power"]["window_ns"], 200.0)
        self.assertNotEqual(ahbm.run(FANOUT, values=False)["summary"]["power"]["window_ns"], 200.0)
        for bad in (0, -5, 10**13):
            with self.assertRaises(ahbm.InputError) as e:
                ahbm.run(FANOUT, values=False, power_window_ns=bad)
            self.assertIn("power_window_ns", str(e.exception))
        # objective: as --objective (what auto and the tile choice minimise).
        summary = cli_run(FANOUT, os.path.join(self.dir, "cli_obj"), "--no-vcd", "--no-values", "--policy", "auto",
                          "--objective", "energy")
        r = ahbm.run(FANOUT, values=False, policy="auto", objective="energy")
        self.assertEqual(r["summary"]["policy"], summary["policy"])
        self.assertEqual(r["summary"]["policy"]["decision"]["objective"], "energy")
        by_time = ahbm.run(FANOUT, values=False, policy="auto")["summary"]["policy"]["decision"]
        self.assertNotEqual(by_time["chosen_tile_rows"], summary["policy"]["decision"]["chosen_tile_rows"])
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(FANOUT, values=False, objective="power")
        for part in ("objective", "power", "time, energy, edp"):
            self.assertIn(part, str(e.exception))

    def test_errors_raise_with_the_field_path(self):
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(FANOUT, {"pe": {"hbm": {"bandwidth_gbps": -1}}})
        self.assertIn("pe.hbm.bandwidth_gbps", str(e.exception))
        self.assertIsInstance(e.exception, ValueError)
        self.assertEqual(ahbm.InputError.exit_code, 2)
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(FANOUT, noc="no_such_noc")
        self.assertIn("no_such_noc", str(e.exception))
        with open(FANOUT) as f:
            sc = json.load(f)
        sc["shared_prefix_tokens"] = -5
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run(sc)
        self.assertIn("shared_prefix_tokens", str(e.exception))
        self.assertIn("-5", str(e.exception))
        with self.assertRaises(ahbm.InputError):
            ahbm.run(os.path.join(self.dir, "missing.json"))
        code, out, err = ahbm.cli(["run", FANOUT])
        self.assertEqual(code, 2)
        self.assertIn("--out", err)

    def test_simulator_reuses_its_chip_with_identical_results(self):
        sim = ahbm.Simulator()
        a = sim.run(FANOUT, values=False)
        b = sim.run(FANOUT, values=False)
        self.assertEqual(sim.elaborations, 1)
        self.assertEqual(json.dumps(a["summary"], sort_keys=True), json.dumps(b["summary"], sort_keys=True))

    def test_out_writes_the_cli_run_directory(self):
        out = os.path.join(self.dir, "py")
        ahbm.run(FANOUT, out=out, vcd=False)
        cli_dir = os.path.join(self.dir, "cli")
        cli_run(FANOUT, cli_dir, "--no-vcd")
        for name in ("latency.csv", "stats.json", "trace.json"):
            with open(os.path.join(out, name), "rb") as a, open(os.path.join(cli_dir, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)

    def test_run_points_gives_the_cli_results(self):
        jobs, cli_dirs = [], []
        hw = os.path.join(self.dir, "hw.json")
        with open(hw, "w") as f:
            json.dump({"pe": {"dma": {"buffers": 3}}}, f)
        for i, args in enumerate([["--no-vcd"], ["--no-vcd", "--policy", "B1"], ["--no-values", "--no-vcd"]]):
            jobs.append({"scenario": FANOUT, "hw": hw, "out": os.path.join(self.dir, f"p{i}"), "args": args})
            cli_dirs.append(os.path.join(self.dir, f"c{i}"))
            subprocess.run([CLI, "run", FANOUT, "--hw", hw, "--out", cli_dirs[-1], *args], check=True,
                           capture_output=True)
        bad = {"scenario": FANOUT, "hw": hw, "out": os.path.join(self.dir, "bad"), "args": ["--policy", "Z9"]}
        result = ahbm.run_points(jobs + [bad])
        self.assertEqual([c for c, _ in result], [0, 0, 0, 2])
        self.assertIn("Z9", result[3][1])
        self.assertFalse(os.path.exists(bad["out"]))
        for job, c in zip(jobs, cli_dirs):
            with open(os.path.join(job["out"], "latency.csv")) as a, open(os.path.join(c, "latency.csv")) as b:
                self.assertEqual(a.read(), b.read())

    def test_run_points_serves_workloads_as_the_cli(self):
        # tools/sweep's serve points: {"command": "serve", "workload": ...} is `ahbm-sim serve`.
        workload = os.path.join(ROOT, "traces", "serve", "agentic_mix.json")
        hw = os.path.join(self.dir, "hw.json")
        with open(hw, "w") as f:
            json.dump({}, f)
        args = ["--set", "pe.hbm.bandwidth_gbps=25.6", "--scheduler", "srf"]
        cli_dir = os.path.join(self.dir, "cli")
        subprocess.run([CLI, "serve", workload, "--hw", hw, "--out", cli_dir, *args], check=True, capture_output=True)
        jobs = [{"command": "serve", "workload": workload, "hw": hw, "out": os.path.join(self.dir, "p0"), "args": args},
                {"command": "serve", "workload": workload, "hw": hw, "out": os.path.join(self.dir, "p1"),
                 "args": ["--rate-per-s", "0"]}]
        result = ahbm.run_points(jobs)
        self.assertEqual([c for c, _ in result], [0, 2])
        self.assertIn("rate-per-s", result[1][1])
        for name in ("summary.json", "requests.csv", "trace.json"):
            with open(os.path.join(self.dir, "p0", name), "rb") as a, open(os.path.join(cli_dir, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run_points([dict(jobs[0], command="bench")])
        self.assertIn("\"bench\" (allowed: run, serve)", str(e.exception))

    def test_noc_bench_returns_its_report(self):
        report = ahbm.noc_bench(["--noc", "mesh", "--rate", "0.05", "--cycles", "2000", "--warmup", "500"])
        self.assertEqual(report["noc"], "mesh")
        self.assertGreater(report["accepted_flits_per_node_cycle"], 0.0)
        self.assertGreater(report["avg_latency_cycles"], 0.0)
        # The same report as the CLI's --out (the bench is seeded).
        out = os.path.join(self.dir, "bench.json")
        subprocess.run([CLI, "noc-bench", "--noc", "mesh", "--rate", "0.05", "--cycles", "2000", "--warmup", "500",
                        "--out", out], check=True, capture_output=True)
        with open(out) as f:
            self.assertEqual(report, json.load(f))
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.noc_bench(["--noc", "no_such_noc"])
        self.assertIn("no_such_noc", str(e.exception))

    def test_noc_bench_does_not_follow_a_planted_link(self):
        # Issue 42, item 19: the report went to $TMPDIR/ahbm-noc-bench-PID.json, following a link
        # planted there onto a victim file; now it goes to a mkdtemp directory of the call's own.
        victim = os.path.join(self.dir, "victim.txt")
        with open(victim, "w") as f:
            f.write("keep me")
        os.symlink(victim, os.path.join(self.dir, f"ahbm-noc-bench-{os.getpid()}.json"))
        old = os.environ.get("TMPDIR")
        os.environ["TMPDIR"] = self.dir
        try:
            report = ahbm.noc_bench(["--noc", "ring", "--cycles", "300", "--warmup", "0"])
        finally:
            if old is None:
                del os.environ["TMPDIR"]
            else:
                os.environ["TMPDIR"] = old
        self.assertEqual(report["noc"], "ring")
        with open(victim) as f:
            self.assertEqual(f.read(), "keep me")
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(["victim.txt", f"ahbm-noc-bench-{os.getpid()}.json"]))

    def test_arguments_of_the_wrong_kind_raise(self):
        # Issue 42, item 18: cli(["--version"]) returned 2; run_points split an "args" string into
        # its characters; seed=True was taken as seed 1.
        code, out, err = ahbm.cli(["--version"])
        self.assertEqual((code, out, err), (0, f"ahbm-sim {ahbm.__version__} (commit {ahbm.commit})\n", ""))
        self.assertEqual(ahbm.cli(["--version", "extra"])[0], 2)
        job = {"scenario": FANOUT, "hw": os.path.join(ROOT, "hw", "configs", "default.json"),
               "out": os.path.join(self.dir, "p"), "args": "--no-values"}
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.run_points([job])
        self.assertIn('job "args": expected a list of strings, got str', str(e.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "p")))
        for call in (lambda: ahbm.run(FANOUT, seed=True, values=False),
                     lambda: ahbm.serve(os.path.join(ROOT, "traces", "serve", "agentic_mix.json"), seed=True)):
            with self.assertRaises(ahbm.InputError) as e:
                call()
            self.assertIn("seed: value True is not an integer", str(e.exception))

    def test_serve_matches_the_cli(self):
        workload = os.path.join(ROOT, "traces", "serve", "agentic_mix.json")
        out = os.path.join(self.dir, "serve")
        subprocess.run([CLI, "serve", workload, "--scheduler", "srf", "--seed", "3", "--out", out, "--vcd"],
                       check=True, capture_output=True)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        sim = ahbm.Simulator()
        r = sim.serve(workload, scheduler="srf", seed=3)
        self.assertEqual(r["summary"], summary)  # the whole summary, echoes and percentiles included
        self.assertNotIn("vcd", r)
        # vcd=True: the CLI's waves.vcd, returned as text and written into out=DIR.
        py_out = os.path.join(self.dir, "serve_py")
        with_vcd = sim.serve(workload, scheduler="srf", seed=3, vcd=True, out=py_out)
        with open(os.path.join(out, "waves.vcd")) as f:
            cli_vcd = f.read()
        self.assertIn(" kv_pages ", cli_vcd)
        self.assertEqual(with_vcd["vcd"], cli_vcd)
        with open(os.path.join(py_out, "waves.vcd")) as f:
            self.assertEqual(f.read(), cli_vcd)
        self.assertEqual(with_vcd["summary"], summary)
        # requests.csv's rows as columns pandas takes directly, numbers as numbers.
        # round_trip: pandas' default fast parser can land one ulp off a 17-digit number.
        df = pd.DataFrame(r["requests"])
        csv = pd.read_csv(os.path.join(out, "requests.csv"), float_precision="round_trip")
        self.assertEqual(list(df.columns), list(csv.columns))
        self.assertEqual(len(df), summary["requests"]["count"])
        # The file's table exactly: every column of the type pandas reads it as (integer columns
        # int64, not float64), every value equal.
        pd.testing.assert_frame_equal(df, csv, check_exact=True)
        for c in ("workflow", "round", "branch", "prefill_tokens", "generated_tokens", "cancelled"):
            self.assertEqual(df[c].dtype, np.int64, c)
        self.assertEqual(df["done_ns"].dtype, np.float64)
        # A workload as a dict, with its scenario made absolute, gives the same run; the simulator's
        # chips are reused (no new elaboration for the same shapes).
        with open(workload) as f:
            w = json.load(f)
        w["scenario"] = os.path.join(ROOT, "traces", "serve", w["scenario"])
        before = sim.elaborations
        again = sim.serve(w, scheduler="srf", seed=3)
        self.assertEqual(again["summary"]["requests"], summary["requests"])
        self.assertEqual(sim.elaborations, before)
        # A higher arrival rate queues more: the mean queueing time does not fall.
        busier = ahbm.serve(workload, scheduler="srf", seed=3, rate_per_s=4 * w["arrival"]["rate_per_s"])
        self.assertGreaterEqual(busier["summary"]["requests"]["queueing"]["mean_ns"],
                                summary["requests"]["queueing"]["mean_ns"])
        # stop_at_s: as --stop-at-s, a window of the run with the summary's partial block.
        stop_out = os.path.join(self.dir, "serve_stop")
        subprocess.run([CLI, "serve", workload, "--stop-at-s", "0.005", "--out", stop_out], check=True, capture_output=True)
        with open(os.path.join(stop_out, "summary.json")) as f:
            stopped = json.load(f)
        windowed = sim.serve(workload, stop_at_s=0.005)["summary"]
        self.assertIn("partial", windowed)
        self.assertEqual(windowed, stopped)
        for bad in (0.0, -1.0, float("nan"), 2e9):
            with self.assertRaises(ahbm.InputError) as e:
                sim.serve(workload, stop_at_s=bad)
            self.assertIn("stop_at_s", str(e.exception))

    def test_serve_placement_passes_through_the_workload_dict(self):
        # scheduler.placement is a workload field: a dict carries it, no argument of its own.
        with open(os.path.join(ROOT, "traces", "serve", "agentic_mix.json")) as f:
            w = json.load(f)
        w["scenario"] = os.path.join(ROOT, "traces", "serve", w["scenario"])
        w["arrival"]["count"] = 4
        w.setdefault("scheduler", {})["placement"] = "prefix_affinity"
        summary = ahbm.serve(w, set=["groups=4"])["summary"]
        self.assertEqual(summary["placement"]["rule"], "prefix_affinity")
        self.assertEqual([s["name"] for s in summary["placement"]["slices"]], ["slice0", "slice1"])
        self.assertEqual(sum(s["workflows"] for s in summary["placement"]["slices"]), 4)
        w["scheduler"]["placement"] = "packed"
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.serve(w)
        for part in ("scheduler.placement", "packed", "spread, prefix_affinity"):
            self.assertIn(part, str(e.exception))

    def test_serve_errors_raise_with_the_field_path(self):
        workload = os.path.join(ROOT, "traces", "serve", "agentic_mix.json")
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.serve(workload, scheduler="lifo")
        self.assertIn("lifo", str(e.exception))
        self.assertIn("fcfs", str(e.exception))  # the known names
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.serve(workload, rate_per_s=0.0)
        self.assertIn("rate_per_s", str(e.exception))
        with self.assertRaises(ahbm.InputError) as e:  # an attention-only model has no weight GEMM to map
            ahbm.serve(workload, gemm_mapping="x_stationary")
        self.assertIn("gemm_mapping = 'x_stationary'", str(e.exception))
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.serve(workload, gemm_mapping="diagonal")
        for part in ("gemm_mapping", "diagonal", "w_stationary, x_stationary"):
            self.assertIn(part, str(e.exception))
        with self.assertRaises(ahbm.InputError) as e:  # a trace-driven workload has no rate
            ahbm.serve(os.path.join(ROOT, "traces", "serve", "azure_sample.json"), rate_per_s=10.0)
        self.assertIn("poisson", str(e.exception))
        with open(workload) as f:
            w = json.load(f)
        w["scenario"] = os.path.join(ROOT, "traces", "serve", w["scenario"])
        w["arrival"]["count"] = -1
        with self.assertRaises(ahbm.InputError) as e:
            ahbm.serve(w)
        self.assertIn("arrival.count", str(e.exception))
        code, _, err = ahbm.cli(["serve", os.path.join(ROOT, "traces", "serve", "azure_sample.json"), "--rate-per-s",
                                 "10", "--out", os.path.join(self.dir, "no")])
        self.assertEqual(code, 2)
        self.assertIn("poisson", err)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "no")))


def run_script(test, script, *args):
    """Runs a Python script with the module in a child interpreter (a crash there fails the test
    with its exit status, not the whole suite); returns the JSON object it prints last."""
    p = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=600)
    test.assertEqual(p.returncode, 0, f"exit {p.returncode}; stderr: {p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


THREADS_SCRIPT = r"""
import json, sys, threading
import ahbm
fanout, workload = sys.argv[1], sys.argv[2]
want_run = ahbm.run(fanout, values=False)["summary"]["total_ns"]
want_serve = ahbm.serve(workload)["summary"]
got, errors = [], []
def work(i):
    try:
        for _ in range(3):
            if i % 2:
                got.append(("run", ahbm.run(fanout, values=False)["summary"]["total_ns"]))
            else:
                got.append(("serve", ahbm.serve(workload)["summary"]))
            code, out, err = ahbm.cli(["nocs"])
            got.append(("cli", code))
    except Exception as e:
        errors.append(repr(e))
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
ok = all((v == want_run) if k == "run" else (v == want_serve) if k == "serve" else v == 0 for k, v in got)
print(json.dumps({"results": len(got), "same": ok, "errors": errors}))
"""

INTERRUPT_SCRIPT = r"""
import json, os, signal, sys, threading, time
import ahbm
workload, out = json.loads(sys.argv[1]), sys.argv[2]
sent = []
def interrupt():
    time.sleep(1.0)
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=interrupt, daemon=True).start()
outcome, returned = "returned", None
try:
    ahbm.serve(workload, out=out)
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
    returned = time.monotonic()
# The module works on after it: a small serve runs to the end.
small = dict(workload, arrival={"process": "poisson", "rate_per_s": 20000, "count": 2})
after = len(ahbm.serve(small)["requests"]["workflow"])
print(json.dumps({"outcome": outcome, "seconds": (returned - sent[0]) if returned and sent else None,
                  "out_exists": os.path.exists(out), "after": after}))
"""


class ThreadsAndInterrupts(unittest.TestCase):
    """docs/python.md, "Threads and Ctrl-C": simulations of several threads are serialised (the
    SystemC kernel is one per process); Ctrl-C during a call raises KeyboardInterrupt and leaves no
    partial out= directory (issue 42, items 1 and 2)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ahbm-py-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_threads_calling_run_serve_and_cli_at_once_get_the_sequential_results(self):
        r = run_script(self, THREADS_SCRIPT, FANOUT, os.path.join(ROOT, "traces", "serve", "agentic_mix.json"))
        self.assertEqual(r["errors"], [])
        self.assertEqual(r["results"], 4 * 3 * 2)
        self.assertTrue(r["same"])

    def test_ctrl_c_during_serve_raises_keyboard_interrupt_and_leaves_no_output(self):
        with open(os.path.join(ROOT, "traces", "serve", "agentic_mix.json")) as f:
            workload = json.load(f)
        workload["scenario"] = os.path.join(ROOT, "traces", "serve", workload["scenario"])
        workload["arrival"]["count"] = 5000  # minutes of serving: the interrupt comes long before the end
        workload["scheduler"]["step_cache"] = False
        out = os.path.join(self.dir, "sub", "serve")
        r = run_script(self, INTERRUPT_SCRIPT, json.dumps(workload), out)
        self.assertEqual(r["outcome"], "KeyboardInterrupt")
        self.assertFalse(r["out_exists"])  # interrupted inside the call: a finished call writes out
        self.assertEqual(os.listdir(self.dir), [])  # no lock file, staging tree or created parent left
        self.assertGreater(r["after"], 0)
        print(f"KeyboardInterrupt {r['seconds']:.3f} s after SIGINT", file=sys.stderr)


def pybind_signature(doc):
    """[(name, kind, default)] from pybind11's signature line `f(a: T, *, b: T = 1) -> R`:
    kind 'positional' or 'keyword' (after `*`), default the Python value or the string 'required'."""
    first = doc.splitlines()[0]
    inner = first[first.index("(") + 1:first.rindex(")")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "[(" and 1 or (-1 if ch in "])" else 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    out, kind = [], "positional"
    for p in parts:
        if p == "*":
            kind = "keyword"
            continue
        name = p.split(":")[0].strip()
        if name == "self":
            continue
        default = ast.literal_eval(p.split(" = ", 1)[1]) if " = " in p else "required"
        out.append((name, kind, default))
    return out


def stub_signature(fn):
    a = fn.args
    params = [p for p in a.posonlyargs + a.args if p.arg != "self"]
    defaults = [None] * (len(a.posonlyargs + a.args) - len(a.defaults)) + list(a.defaults)
    defaults = defaults[len(a.posonlyargs + a.args) - len(params):]
    out = [(p.arg, "positional", "required" if d is None else ast.literal_eval(d)) for p, d in zip(params, defaults)]
    out += [(p.arg, "keyword", "required" if d is None else ast.literal_eval(d))
            for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out


class StubCase(unittest.TestCase):
    """tools/python/ahbm/__init__.pyi declares what the module has: the same names, every
    function's arguments (names, positional or keyword-only, defaults) as pybind11's signature,
    and every argument documented in the docstring help() shows."""

    @classmethod
    def setUpClass(cls):
        stub = os.path.join(os.path.dirname(ahbm.__file__), "__init__.pyi")
        with open(stub) as f:
            cls.tree = ast.parse(f.read())
        cls.functions = {n.name: n for n in cls.tree.body if isinstance(n, ast.FunctionDef)}
        cls.classes = {n.name: n for n in cls.tree.body if isinstance(n, ast.ClassDef)}

    def check(self, name, obj, fn):
        want = pybind_signature(obj.__doc__)
        self.assertEqual(stub_signature(fn), want, name)
        documented = re.findall(r"^    (\w+): ", obj.__doc__, re.M)
        for arg, _, _ in want:
            self.assertIn(arg, documented, f"{name}: argument {arg} not in the docstring")
        for arg, _, default in want:
            if default != "required":
                line = obj.__doc__[obj.__doc__.index(f"    {arg}: "):].split("\n")[0]
                self.assertIn("default", line, f"{name}: {arg}'s default not documented")

    def test_module_functions_match_the_stub(self):
        public = {n for n in dir(ahbm) if not n.startswith("_") and callable(getattr(ahbm, n))
                  and not isinstance(getattr(ahbm, n), type)}
        self.assertEqual(public, set(self.functions), "functions of the module vs the stub")
        for name, fn in self.functions.items():
            self.check(name, getattr(ahbm, name), fn)

    def test_classes_match_the_stub(self):
        classes = {n for n in dir(ahbm) if isinstance(getattr(ahbm, n), type)}
        self.assertEqual(classes, {c for c in self.classes if not c.endswith("Result")})
        for name in classes - {"Simulator"}:
            self.assertEqual(getattr(ahbm, name).__bases__[0].__name__, self.classes[name].bases[0].id, name)
        methods = {n.name: n for n in self.classes["Simulator"].body if isinstance(n, ast.FunctionDef)}
        self.assertEqual(set(methods), {"__init__", "run", "serve", "elaborations"})
        for name in ("__init__", "run", "serve"):
            self.check(f"Simulator.{name}", getattr(ahbm.Simulator, name), methods[name])
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(ahbm.__file__), "py.typed")))
        variables = {n.target.id for n in self.tree.body if isinstance(n, ast.AnnAssign)}
        self.assertEqual(variables, {"__version__", "commit"})
        self.assertEqual(set(ahbm.__all__), set(self.functions) | classes | {"commit"})


if __name__ == "__main__":
    unittest.main()
