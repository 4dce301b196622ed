#!/usr/bin/python3
"""tools/sweep without a cluster (docs/sweeps.md): bad input, staleness by content hash, retries,
the in-process module hook, the Slurm script's shape. ahbm-sim is replaced by fake_ahbm.py (beside
this file), which is fast and fails on cue; the real binary is exercised by sweep_slurm_test.py and
the C++ OutputsTools tests."""
import csv
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SWEEP = os.path.join(ROOT, "tools", "sweep")
PLOT = os.path.join(ROOT, "tools", "plot")


def read(path):
    with open(path) as f:
        return f.read()


class SweepCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ahbm-sweep-test-")
        self.log = self.path("calls.log")
        self.cli = self.make_cli("v1")
        self.scenario = self.write("scenario.json", {"name": "s", "shared_prefix_tokens": 1024, "seed": 1})
        self.hw = self.write("hw.json", {"pe": {"dma": {"buffers": 2}}})

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def write(self, name, doc):
        with open(self.path(name), "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return self.path(name)

    def make_cli(self, variant):
        path = self.path("bin", "ahbm-sim")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:  # the variant comment changes the binary's content hash
            f.write(f"#!/usr/bin/python3\n# fake ahbm-sim, {variant}\nimport runpy, sys\n"
                    f"sys.path.insert(0, {HERE!r})\nrunpy.run_path({HERE + '/fake_ahbm.py'!r}, run_name='__main__')\n")
        os.chmod(path, 0o755)
        return path

    def grid(self, params=None, run_args=None, name="grid.json", **extra):
        doc = {"scenario": self.scenario, "hw": self.hw,
               "parameters": params or {"scenario.shared_prefix_tokens": [1024, 4096], "hw.pe.dma.buffers": [1, 2]},
               "run_args": run_args if run_args is not None else ["--no-values"]}
        doc.update(extra)
        return self.write(name, doc)

    def sweep(self, *args, env=None, cli=True):
        e = dict(os.environ, FAKE_AHBM_LOG=self.log, AHBM_SWEEP_CLI_ONLY="")
        e.pop("PYTHONPATH", None)
        e.update(env or {})
        cmd = ["/usr/bin/python3", SWEEP] + list(args) + (["--cli", self.cli] if cli else [])
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def calls(self):
        """The fake's runs since the last call of this method (its hw-config checks go to
        self.hw_checks)."""
        try:
            with open(self.log) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        if os.path.exists(self.log):
            os.remove(self.log)
        self.hw_checks = [l for l in lines if l.startswith("hw-config")]
        return [l for l in lines if not l.startswith("hw-config")]

    def rows(self, out):
        with open(os.path.join(out, "results.csv")) as f:
            return list(csv.DictReader(f))


class BadInput(SweepCase):
    """Exit 2, one line naming the file (or option) and the field; never a traceback."""

    def expect_2(self, args, *needles, cli=True):
        rc, out, err = self.sweep(*args, cli=cli)
        self.assertEqual(rc, 2, f"{args}: {out}{err}")
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for n in needles:
            self.assertIn(n, err)
        return err

    def test_grid_file_problems(self):
        out = self.path("out")
        self.expect_2([self.path("nosuch.json"), "--out", out], "nosuch.json: cannot read grid")
        self.expect_2([self.write("g1.json", "{\"scenario\": "), "--out", out], "g1.json: not valid JSON")
        self.expect_2([self.write("g2.json", "[1, 2]"), "--out", out], "g2.json: the grid must be a JSON object")
        self.expect_2([self.write("g3.json", "[" * 100000 + "]" * 100000), "--out", out], "g3.json: not valid JSON")
        self.expect_2([self.write("g4.json", {"scenario": self.scenario, "paramters": {}}), "--out", out],
                      "g4.json: unknown key \"paramters\"")
        self.expect_2([self.write("g5.json", {"parameters": {"scenario.seed": [1]}}), "--out", out],
                      "g5.json: exactly one of \"scenario\"", "\"workload\"", "neither is given")
        self.expect_2([self.write("g6.json", {"scenario": self.scenario, "workload": self.scenario,
                                              "parameters": {"scenario.seed": [1]}}), "--out", out],
                      "g6.json: exactly one of \"scenario\"", "\"workload\"", "both are given")
        self.expect_2([self.write("g7.json", {"workload": "", "parameters": {"workload.seed": [1]}}), "--out", out],
                      "g7.json: \"workload\" must name the base workload file")

    def test_referenced_files(self):
        out = self.path("out")
        g = self.write("g.json", {"scenario": "nosuch-scenario.json", "parameters": {"scenario.seed": [1]}})
        self.expect_2([g, "--out", out], "g.json: \"scenario\": file not found: nosuch-scenario.json")
        bad = self.write("bad-scenario.json", "{\"name\": 1,,}")
        g = self.write("g.json", {"scenario": bad, "parameters": {"scenario.seed": [1]}})
        self.expect_2([g, "--out", out], "bad-scenario.json: not valid JSON")
        hw = self.write("list-hw.json", "[]")
        g = self.write("g.json", {"scenario": self.scenario, "hw": hw, "parameters": {"scenario.seed": [1]}})
        self.expect_2([g, "--out", out], "list-hw.json: the hardware config must be a JSON object")

    def test_parameters_and_run_args(self):
        out = self.path("out")
        cases = [({"parameters": {}}, "\"parameters\" must be a non-empty object"),
                 ({"parameters": {"model.head_dim": [64]}}, "parameters.model.head_dim: a path is"),
                 ({"parameters": {"scenario.seed": 3}}, "parameters.scenario.seed: must be a non-empty list"),
                 ({"parameters": {"scenario.seed.x": [1]}}, "parameters.scenario.seed.x: seed is a int, not an object"),
                 ({"parameters": {"scenario.agents.0.new_tokens": [1]}}, "parameters.scenario.agents.0.new_tokens"),
                 ({"parameters": {f"scenario.f{i}": list(range(11)) for i in range(5)}}, "161051 points; at most"),
                 ({"run_args": "--no-vcd"}, "\"run_args\" must be a list of strings"),
                 ({"run_args": ["--out=x"]}, "run_args: \"--out=x\" is set by the sweep"),
                 ({"run_args": ["-ox"]}, "run_args: \"-ox\" is set by the sweep")]
        for i, (override, needle) in enumerate(cases):
            doc = {"scenario": self.scenario, "parameters": {"scenario.seed": [1]}}
            doc.update(override)
            if "agents" in needle:
                self.write("scenario.json", {"name": "s", "agents": []})
            g = self.write(f"p{i}.json", doc)
            with self.subTest(needle=needle):
                self.expect_2([g, "--out", out], f"p{i}.json", needle)
        self.assertFalse(os.path.exists(out), "bad input leaves no output directory")

    def test_options(self):
        g, out = self.grid(), self.path("out")
        self.expect_2([g, "--out", out, "-j", "0"], "-j/--jobs: 0 is out of range (at least 1)")
        self.expect_2([g, "--out", out, "--points-per-task", "x"], "--points-per-task: not a number: 'x'")
        self.expect_2([g, "--out", out, "--executor", "pbs"], "--executor: invalid choice: 'pbs'")
        self.expect_2([g, "--out", out, "--executor", "slurm", "--time", "soon"], "--time: 'soon' is not a Slurm time")
        self.expect_2([g, "--out", out, "--cli", self.path("nosuch")], f"--cli {self.path('nosuch')}: not an executable",
                      cli=False)
        self.expect_2([g], "GRID and --out DIR are required")
        self.expect_2([g, "--out", self.scenario], "exists and is not a directory")

    def test_foreign_out_dir_is_refused_and_untouched(self):
        foreign = self.path("project")
        os.makedirs(os.path.join(foreign, "points"))
        self.write("project/main.c", "int main;")
        self.expect_2([self.grid(), "--out", foreign], "not a sweep (no .ahbm-sweep)")
        self.expect_2([self.grid(), "--out", foreign, "--collect"], "not a sweep directory")
        self.assertEqual(sorted(os.listdir(foreign)), ["main.c", "points"])
        self.assertEqual(os.listdir(os.path.join(foreign, "points")), [])

    def test_duplicate_grid_keys_and_a_missing_ahbm_cli_are_refused(self):
        # Issue 42, item 17: a key given twice was silently the last one; AHBM_CLI naming no
        # binary silently fell back to the build's.
        out = self.path("out")
        g = self.write("dup.json", '{"scenario": "%s", "parameters": {"scenario.seed": [1], "scenario.seed": [2]}}'
                       % self.scenario)
        self.expect_2([g, "--out", out], "dup.json", "key \"scenario.seed\" is given twice")
        rc, o, e = self.sweep(self.grid(), "--out", out, env={"AHBM_CLI": "/nonexistent"}, cli=False)
        self.assertEqual(rc, 2, o + e)
        self.assertIn("AHBM_CLI=/nonexistent: not an executable file", e)
        self.assertFalse(os.path.exists(out))

    def test_a_second_sweep_into_a_locked_dir_is_refused(self):
        # Two sweeps into one DIR recorded each other's running points as failed (issue 42, item
        # 20): the second is refused while the first holds DIR/.sweep.lock.
        out = self.path("out")
        rc, o, e = self.sweep(self.grid(), "--out", out)
        self.assertEqual(rc, 0, o + e)
        fd = os.open(os.path.join(out, ".sweep.lock"), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running sweep holds it
            self.expect_2([self.grid(), "--out", out, "--rerun-failed"], "another sweep", "is running into it")
        finally:
            os.close(fd)
        rc, o, e = self.sweep(self.grid(), "--out", out)  # released: runs again
        self.assertEqual(rc, 0, o + e)

    def test_files_are_written_through_fresh_temporary_names(self):
        # A link planted at the old guessable temporary name (PATH.tmp-PID) redirected the write
        # onto its target (issue 42, item 19): write_file makes its temporary with mkstemp.
        import importlib.machinery
        import importlib.util
        from unittest import mock
        loader = importlib.machinery.SourceFileLoader("sweep_tool", SWEEP)
        spec = importlib.util.spec_from_loader("sweep_tool", loader)
        sweep = importlib.util.module_from_spec(spec)
        loader.exec_module(sweep)
        victim = self.write("victim.txt", "keep me")
        target = self.path("results.csv")
        os.symlink(victim, target + ".tmp-4242")
        with mock.patch("os.getpid", return_value=4242):
            sweep.write_file(target, "a,b\n")
        self.assertEqual(read(victim), "keep me")
        self.assertEqual(read(target), "a,b\n")
        self.assertEqual(os.stat(target).st_mode & 0o777, 0o666 & ~sweep.UMASK)

    def test_plot_bad_input(self):
        run = self.path("run")
        os.makedirs(run)
        self.write("run/trace.json", "{\"traceEvents\": 3}")
        self.write("run/stats.json", "{\"components\": {}}")
        for args, needle in (([run], "trace.json: traceEvents: missing or not a list"), ([self.path("nosuch")], "nosuch"),
                             (["--sweep", self.write("r.csv", "point,status\np0,ok\n")], "r.csv"),
                             # issue 42, item 16: a row wider than the header was an internal error
                             # (exit 1); a text column as y plotted an empty chart (exit 0)
                             (["--sweep", self.write("w.csv", "point,status,error,scenario.a,total_ns\n0,ok,,1,5,9,9\n")],
                              "w.csv: line 2: 7 fields, the header has 5"),
                             (["--sweep", self.write("t.csv", "point,status,error,scenario.a,total_ns\n0,ok,,1,5\n"),
                               "--y", "status"], "t.csv: column 'status' holds no numbers")):
            self.plot_fails(args, needle)

    def plot_fails(self, args, needle):
        """tools/plot ARGS exits 2 with one line holding needle."""
        p = subprocess.run(["/usr/bin/python3", PLOT] + args + ["--out", self.path("png")],
                           capture_output=True, text=True)
        with self.subTest(args=args):
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(needle, p.stderr)

    def test_serve_plot_bad_input(self):
        """A serve directory (its summary echoes a workload) whose trace or requests.csv is broken,
        and a serve sweep's results.csv without a latency column: exit 2 naming file and field."""
        serve = self.path("serve")
        os.makedirs(serve)
        self.write("serve/summary.json", {"workload": {"name": "w"}, "kv": {"pages_total": 100}, "end_ns": 2000})
        self.write("serve/requests.csv", "workflow,round,ready_ns,first_token_ns,done_ns,cancelled,generated_tokens\n"
                                         "0,-1,0,500,900,0,2\n0,0,x,600,800,0,1\n")
        counters = [{"name": "queue", "ph": "C", "ts": 0, "args": {"waiting": 0, "active": 1}},
                    {"name": "batch", "ph": "C", "ts": 0, "args": {"tokens": 8, "workflows": 1}}]
        self.write("serve/trace.json", {"traceEvents": counters})
        rates = self.write("rates.csv", "point,status,error,workload.arrival.rate_per_s,throughput.tokens_per_s,"
                                        "requests.ttft.p99_ns\np0000,ok,,10,100,5\n")

        self.plot_fails([serve], "trace.json: no \"kv_pages\" counter track")
        counters.append({"name": "kv_pages", "ph": "C", "ts": 0, "args": {"in_use": 3}})
        self.write("serve/trace.json", {"traceEvents": counters})
        self.plot_fails([serve], "requests.csv: line 3: column ready_ns: not a number ('x')")
        self.assertFalse(os.path.exists(self.path("png")), "nothing is written before the inputs are checked")
        self.plot_fails(["--sweep", rates], "rates.csv: column 'workflows.end_to_end.p99_ns' needed")


class Staleness(SweepCase):
    """A point runs again exactly when its scenario, hw config, run_args or binary changed."""

    def run_count(self, g, out, *extra):
        rc, _, err = self.sweep(g, "--out", out, "-j", "2", *extra)
        self.assertEqual(rc, 0, err)
        return len([c for c in self.calls() if c.startswith("cli ")]), err

    def test_points_are_counted_with_an_eta_and_quiet_prints_none(self):
        g, out = self.grid(), self.path("out")
        rc, _, err = self.sweep(g, "--out", out, "-j", "1")
        self.assertEqual(rc, 0, err)
        lines = [l for l in err.splitlines() if l.startswith("sweep: [")]
        self.assertEqual([l.split("]")[0] for l in lines], [f"sweep: [{i}/4" for i in range(1, 5)], err)
        self.assertTrue(all(" ETA " in l for l in lines[:3]) and " ETA " not in lines[3], err)
        self.assertRegex(lines[0], r"^sweep: \[1/4\] p\d{4}: ok \| ETA \d+ s$")
        self.calls()
        self.write("scenario.json", {"name": "s", "shared_prefix_tokens": 1024, "seed": 3})
        rc, out_text, err = self.sweep(g, "--out", out, "-q")
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "", "-q: nothing on stderr when every point is ok")
        self.assertIn("4 points, 4 ok", out_text, "the result is still printed")
        self.write("scenario.json", {"name": "s", "shared_prefix_tokens": 1024, "seed": 4})
        rc, _, err = self.sweep(g, "--out", out, "-v", "-j", "1")
        self.assertEqual(rc, 0, err)
        self.assertIn(" elapsed", err)
        rc, _, err = self.sweep(g, "--out", out, "-q", "-v")
        self.assertEqual(rc, 2)
        self.assertIn("give one of them", err)

    def test_every_defining_input_makes_points_stale(self):
        g, out = self.grid(), self.path("out")
        self.assertEqual(self.run_count(g, out)[0], 4)
        self.assertEqual(self.run_count(g, out)[0], 0, "nothing changed: nothing runs")
        before = self.rows(out)

        with open(self.scenario, "w") as f:  # the same content, formatted differently: not stale
            json.dump({"seed": 1, "shared_prefix_tokens": 1024, "name": "s"}, f, indent=7)
        self.assertEqual(self.run_count(g, out)[0], 0)

        self.write("scenario.json", {"name": "s", "shared_prefix_tokens": 1024, "seed": 2})
        n, err = self.run_count(g, out)
        self.assertEqual(n, 4, "the base scenario changed")
        self.assertIn("running 4 (4 stale)", err)
        self.assertEqual([r["seed"] for r in self.rows(out)], ["2"] * 4)

        self.write("hw.json", {"pe": {"dma": {"buffers": 2}, "sram_kib": 512}})
        self.assertEqual(self.run_count(g, out)[0], 4, "the base hw config changed")
        self.assertEqual(self.run_count(self.grid(run_args=["--no-values", "--no-vcd"]), out)[0], 4, "run_args")
        self.assertEqual([r["note"] for r in self.rows(out)], ["--no-values --no-vcd"] * 4)

        self.cli = self.make_cli("v2")
        self.assertEqual(self.run_count(g, out)[0], 4, "a rebuilt binary")
        key = json.loads(read(os.path.join(out, "points", "p0000", "key.json")))
        self.assertEqual(sorted(key["parts"]), ["binary_sha256", "hw_set", "hw_sha256", "run_args", "scenario_sha256"])

        g = self.grid(params={"scenario.shared_prefix_tokens": [1024, 8192], "hw.pe.dma.buffers": [1, 2]},
                      run_args=["--no-values", "--no-vcd"])
        self.assertEqual(self.run_count(g, out)[0], 2, "only the points whose value changed")
        rows = self.rows(out)
        self.assertEqual([r["scenario.shared_prefix_tokens"] for r in rows], ["1024", "1024", "8192", "8192"])
        self.assertEqual(rows[3]["total_ns"], str(8192 * 3.5 / 2))
        self.assertEqual(rows[0]["total_ns"], before[0]["total_ns"])

    def test_a_model_config_next_to_the_scenario_resolves_and_keys_the_points(self):
        # A whole model's config named relative to its scenario: the point's scenario.json is
        # written elsewhere, so the path is made absolute there, and its content is in the key.
        os.makedirs(self.path("models"))
        config = self.write("models/tiny.json", {"hidden_size": 64})
        self.scenario = self.write("models/scenario.json", {"name": "s", "seed": 1, "model": {"config": "tiny.json"}})
        g, out = self.grid(params={"scenario.seed": [1, 2]}), self.path("out")
        self.assertEqual(self.run_count(g, out)[0], 2)
        point = json.loads(read(os.path.join(out, "points", "p0000", "scenario.json")))
        self.assertEqual(point["model"]["config"], config)
        key = json.loads(read(os.path.join(out, "points", "p0000", "key.json")))
        self.assertIn("model_config_sha256", key["parts"])
        self.assertEqual(self.run_count(g, out)[0], 0, "nothing changed: nothing runs")
        self.write("models/tiny.json", {"hidden_size": 128})
        rc, _, err = self.sweep(g, "--out", out, "--collect")
        self.assertEqual(err.count("stale: model_config changed"), 2, err)
        self.assertEqual(self.run_count(g, out)[0], 2, "the model's config changed")

    def test_collect_names_stale_points_without_running_them(self):
        g, out = self.grid(), self.path("out")
        self.run_count(g, out)
        self.write("hw.json", {"pe": {"dma": {"buffers": 2}}, "noc": {"model": "mesh"}})
        rc, stdout, err = self.sweep(g, "--out", out, "--collect")
        self.assertEqual(rc, 1)
        self.assertIn("4 missing", stdout)
        self.assertIn("p0003 missing: stale: hw changed", err)
        self.assertEqual(self.calls(), [])


class HardwareOverrides(SweepCase):
    """hw.* parameters reach ahbm-sim as `run --set KEY=VALUE` on the unchanged base config, and
    each distinct set is checked with `ahbm-sim hw-config` before any point runs."""

    def test_hw_parameters_are_set_options_on_the_base_config(self):
        g, out = self.grid(), self.path("out")
        rc, _, err = self.sweep(g, "--out", out, "-j", "1")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(self.calls()), 4)
        self.assertEqual(sorted(self.hw_checks), ["hw-config pe.dma.buffers=1", "hw-config pe.dma.buffers=2"])
        p0 = os.path.join(out, "points", "p0000")
        self.assertEqual(json.loads(read(os.path.join(p0, "hw.json"))), {"pe": {"dma": {"buffers": 2}}})  # the base
        self.assertEqual(json.loads(read(os.path.join(p0, "hw_set.json"))), ["pe.dma.buffers=1"])
        self.assertIn("--set pe.dma.buffers=1", read(os.path.join(p0, "log.txt")))
        rows = self.rows(out)
        self.assertEqual([r["total_ns"] for r in rows], [str(1024 * 3.5), str(1024 * 3.5 / 2),
                                                         str(4096 * 3.5), str(4096 * 3.5 / 2)])

    def test_a_value_the_config_refuses_stops_the_sweep_before_it_runs(self):
        g, out = self.grid(params={"scenario.shared_prefix_tokens": [1024], "hw.pe.dma.buffers": [1, 0]}), self.path("out")
        rc, stdout, err = self.sweep(g, "--out", out)
        self.assertEqual(rc, 2, stdout + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("parameters of p0001 (pe.dma.buffers=0)", err)
        self.assertIn("value 0 is out of range (allowed: [1, 8])", err)
        self.assertEqual(self.calls(), [], "nothing ran")
        self.assertFalse(os.path.exists(out), "nothing written")


class Retries(SweepCase):
    def test_killed_point_is_retried_and_verdicts_are_not(self):
        marker = self.path("killed-once")
        self.write("scenario.json", {"name": "s", "shared_prefix_tokens": 1024, "fake_kill_once": marker})
        g = self.write("g.json", {"scenario": self.scenario, "parameters": {
            "scenario.shared_prefix_tokens": [1024, 2048, 4096]}, "run_args": []})
        rc, stdout, err = self.sweep(g, "--out", self.path("out"), "-j", "1", "--retries", "2")
        self.assertEqual(rc, 0, err)
        self.assertIn("round 2 of 3: rerunning 1 point(s)", err)
        self.assertEqual(len(self.calls()), 4, "3 points + 1 retry of the killed one")
        self.assertTrue(os.path.exists(marker))

        self.write("scenario.json", {"name": "s", "shared_prefix_tokens": 1024, "fake_exit": 2})
        rc, stdout, err = self.sweep(g, "--out", self.path("out2"), "--retries", "2")
        self.assertEqual(rc, 1)
        self.assertEqual(len(self.calls()), 3, "exit 2 is a verdict: not retried")
        self.assertIn("p0002 failed: exit 2: ahbm-sim run: error:", err)
        self.assertIn("fake_exit: value 2", self.rows(self.path("out2"))[0]["error"])
        self.sweep(g, "--out", self.path("out2"))
        self.assertEqual(len(self.calls()), 0, "a verdict is kept across invocations")
        self.sweep(g, "--out", self.path("out2"), "--rerun-failed", "--retries", "0")
        self.assertEqual(len(self.calls()), 3, "--rerun-failed reruns them")

    def test_retries_are_bounded(self):
        self.write("scenario.json", {"name": "s", "fake_exit": 1})
        g = self.write("g.json", {"scenario": self.scenario, "parameters": {"scenario.seed": [1]}})
        rc, _, err = self.sweep(g, "--out", self.path("out"), "--retries", "3")
        self.assertEqual(rc, 1)
        self.assertEqual(len(self.calls()), 4, "exit 1 (internal) is retried: 1 + 3 attempts")


class ServeGrid(SweepCase):
    """A grid whose base is a serve workload: each point runs `ahbm-sim serve` on its workload.json."""

    def setUp(self):
        super().setUp()
        os.makedirs(self.path("serve"))
        self.served = self.write("serve/small.json", {"name": "small", "shared_prefix_tokens": 0, "seed": 3})
        self.workload = self.write("serve/w.json", {"name": "w", "scenario": "small.json",
                                                    "arrival": {"process": "poisson", "rate_per_s": 10, "count": 4},
                                                    "scheduler": {"policy": "fcfs"}})

    def serve_grid(self, name="serve-grid.json", **extra):
        doc = {"workload": self.workload, "hw": self.hw,
               "parameters": {"workload.arrival.rate_per_s": [100, 1000, 5000],
                              "workload.scheduler.policy": ["fcfs", "srf"], "hw.pe.dma.buffers": [1, 2]}}
        doc.update(extra)
        return self.write(name, doc)

    def test_serve_grid_expands_into_serve_points(self):
        g = self.serve_grid()
        out = self.path("out")
        rc, _, err = self.sweep(g, "--out", out, "-j", "2")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(self.calls()),
                         sorted(f"cli serve {self.path('out', 'points', f'p{i:04d}', 'workload.json')}" for i in range(12)))
        rows = self.rows(out)
        self.assertEqual(len(rows), 12)
        for i, r in enumerate(rows):  # grid order, the last parameter fastest
            rate, policy, buffers = [100, 1000, 5000][i // 4], ["fcfs", "srf"][i // 2 % 2], [1, 2][i % 2]
            self.assertEqual((r["workload.arrival.rate_per_s"], r["workload.scheduler.policy"],
                              r["hw.pe.dma.buffers"]), (str(rate), policy, str(buffers)))
            self.assertEqual(r["status"], "ok")
            self.assertEqual(float(r["throughput.tokens_per_s"]), 10 * min(rate, 500 * buffers))
            self.assertEqual(r["scheduler"], policy, "the point's workload carries the overrides")
            doc = json.loads(read(self.path("out", "points", r["point"], "workload.json")))
            self.assertEqual(doc["scenario"], self.served, "the workload's relative path resolves from the point")
            self.assertFalse(os.path.exists(self.path("out", "points", r["point"], "scenario.json")))
        # The echoed inputs are left out as a run's config is; the parameters stay.
        extra = [c for c in rows[0] if c.startswith(("hw.", "workload.")) and c not in json.loads(read(g))["parameters"]]
        self.assertEqual(extra, [])
        # The in-process runner gets serve jobs and gives the same results.csv.
        mod = self.path("mod")
        os.makedirs(mod)
        with open(os.path.join(mod, "ahbm.py"), "w") as f:
            f.write(f"import sys\nsys.path.insert(0, {HERE!r})\nfrom fake_ahbm import run_points\n")
        rc, _, err = self.sweep(g, "--out", self.path("mod-out"), "-j", "2", "--points-per-task", "6",
                                env={"PYTHONPATH": mod})
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.calls(), ["module 6", "module 6"])
        self.assertEqual(read(self.path("out", "results.csv")), read(self.path("mod-out", "results.csv")))

    def test_keys_cover_the_scenario_the_workload_names(self):
        g = self.serve_grid()
        out = self.path("out")
        self.assertEqual(self.sweep(g, "--out", out)[0], 0)
        self.calls()
        self.assertEqual(self.sweep(g, "--out", out)[0], 0)
        self.assertEqual(self.calls(), [], "nothing changed: nothing runs")
        # The same scenario reformatted: same key.
        self.write("serve/small.json", json.dumps({"seed": 3, "shared_prefix_tokens": 0, "name": "small"}, indent=4))
        self.assertEqual(self.sweep(g, "--out", out)[0], 0)
        self.assertEqual(self.calls(), [])
        # Its content changed: every point is stale, and says why.
        self.write("serve/small.json", {"name": "small", "shared_prefix_tokens": 512, "seed": 3})
        rc, _, err = self.sweep(g, "--out", out, "--collect")
        self.assertEqual(rc, 1)
        self.assertEqual(err.count("stale: scenario changed"), 12, err)
        self.assertEqual(self.sweep(g, "--out", out)[0], 0)
        self.assertEqual(len(self.calls()), 12)
        self.assertEqual({r["requests.ttft.p99_ns"] for r in self.rows(out)}, {"1512"}, "the new scenario is served")
        # The workload document itself.
        self.write("serve/w.json", dict(json.loads(read(self.workload)), seed=9))
        rc, _, err = self.sweep(g, "--out", out, "--collect")
        self.assertEqual(err.count("stale: workload changed"), 12, err)
        # A workload naming a different scenario file of the same content: the key follows the
        # content, not the name.
        shutil.copy(self.served, self.path("serve", "copy.json"))
        self.write("serve/w.json", dict(json.loads(read(self.workload)), seed=9, scenario="copy.json"))
        self.assertEqual(self.sweep(g, "--out", out)[0], 0)
        self.assertEqual(len(self.calls()), 12, "the workload document changed (it names another file)")
        self.write(self.path("serve", "copy.json"), {"name": "small", "shared_prefix_tokens": 7, "seed": 3})
        rc, _, err = self.sweep(g, "--out", out, "--collect")
        self.assertEqual(err.count("stale: scenario changed"), 12, err)

    def test_keys_cover_the_arrival_file_the_workload_names(self):
        self.write("serve/trace.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,128,4\n")
        self.write("serve/w.json", dict(json.loads(read(self.workload)),
                                        arrival={"process": "azure_csv", "file": "trace.csv", "rate_per_s": 1}))
        g = self.serve_grid(parameters={"workload.seed": [1, 2]})
        out = self.path("out")
        self.assertEqual(self.sweep(g, "--out", out)[0], 0)
        doc = json.loads(read(self.path("out", "points", "p0000", "workload.json")))
        self.assertEqual(doc["arrival"]["file"], self.path("serve", "trace.csv"))
        self.write("serve/trace.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,128,5\n")
        rc, _, err = self.sweep(g, "--out", out, "--collect")
        self.assertEqual(err.count("stale: arrival_file changed"), 2, err)

    def test_a_slurm_task_serves_its_points(self):
        g = self.serve_grid()
        out = self.path("out")
        rc, _, err = self.sweep(g, "--out", out, "--executor", "slurm", "--script-only", "--points-per-task", "6",
                                "--point-seconds", "1")
        self.assertEqual(rc, 0, err)
        script = os.path.join(out, "slurm", "r01", "sweep.sbatch")
        env = dict(os.environ, SLURM_ARRAY_TASK_ID="1", SLURM_ARRAY_JOB_ID="7", FAKE_AHBM_LOG=self.log)
        p = subprocess.run(["bash", script], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sorted(self.calls()),
                         sorted(f"cli serve {self.path('out', 'points', f'p{i:04d}', 'workload.json')}"
                                for i in range(6, 12)))
        rc, stdout, _ = self.sweep(g, "--out", out, "--collect")
        self.assertIn("12 points, 6 ok, 0 failed, 6 missing", stdout)
        self.assertEqual([r["throughput.tokens_per_s"] != "" for r in self.rows(out)], [False] * 6 + [True] * 6)

    def test_serve_grid_bad_input(self):
        out = self.path("out")
        for i, (override, needle) in enumerate([
                ({"parameters": {"scenario.seed": [1]}}, "parameters.scenario.seed: a path is \"workload.FIELD...\""),
                ({"run_args": ["--workload=x.json"]}, "run_args: \"--workload=x.json\" is set by the sweep"),
                ({"workload": "nosuch.json"}, "\"workload\": file not found: nosuch.json"),
                ({"parameters": {"workload.arrival.rate_per_s.x": [1]}},
                 "workload.arrival.rate_per_s.x: arrival.rate_per_s is a int, not an object")]):
            g = self.serve_grid(name=f"s{i}.json", **override)
            with self.subTest(needle=needle):
                rc, _, err = self.sweep(g, "--out", out)
                self.assertEqual(rc, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn(f"s{i}.json", err)
                self.assertIn(needle, err)
        self.assertFalse(os.path.exists(out))


class ModuleHook(SweepCase):
    """With a Python module `ahbm` on the path, each chunk's points run in one process."""

    def test_points_run_in_process_with_the_same_results(self):
        mod = self.path("mod")
        os.makedirs(mod)
        with open(os.path.join(mod, "ahbm.py"), "w") as f:
            f.write(f"import sys\nsys.path.insert(0, {HERE!r})\nfrom fake_ahbm import run_points\n")
        g = self.grid(params={"scenario.shared_prefix_tokens": [1024, 2048, 4096], "hw.pe.dma.buffers": [1, 2]})
        rc, _, err = self.sweep(g, "--out", self.path("cli"), "-j", "2")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(self.calls()), sorted(f"cli {self.path('cli', 'points', f'p{i:04d}', 'scenario.json')}"
                                                      for i in range(6)))
        rc, _, err = self.sweep(g, "--out", self.path("mod-out"), "-j", "2", "--points-per-task", "4",
                                env={"PYTHONPATH": mod})
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(self.calls()), ["module 2", "module 4"], "one call per chunk, no CLI process")
        with open(self.path("cli", "results.csv")) as a, open(self.path("mod-out", "results.csv")) as b:
            self.assertEqual(a.read(), b.read())
        rc, _, err = self.sweep(g, "--out", self.path("forced"), env={"PYTHONPATH": mod, "AHBM_SWEEP_CLI_ONLY": "1"})
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(self.calls()), 6, "AHBM_SWEEP_CLI_ONLY=1: the CLI")


class SlurmScript(SweepCase):
    def test_chunks_throttle_limits_and_passthrough(self):
        g = self.grid(params={"scenario.shared_prefix_tokens": [1024, 2048, 4096], "scenario.seed": [1, 2, 3, 4]})
        out = self.path("out")
        rc, stdout, err = self.sweep(g, "--out", out, "--executor", "slurm", "--script-only", "--point-seconds", "2",
                                     "--target-task-seconds", "10", "--throttle", "2", "--partition", "short",
                                     "--account", "proj1", "--qos", "low", "--slurm-opt=--constraint=avx2")
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.calls(), [], "--script-only runs nothing")
        script = os.path.join(out, "slurm", "r01", "sweep.sbatch")
        self.assertEqual(subprocess.run(["bash", "-n", script]).returncode, 0)
        text = read(script)
        # 10 s / 2 s = 5 points per task, capped at ceil(12 / throttle 2) = 6 -> 5; 3 tasks.
        tasks = json.loads(read(os.path.join(out, "slurm", "r01", "tasks.json")))
        self.assertEqual([len(t) for t in tasks], [5, 5, 2])
        for line in ("--array=0-2%2", "--time=00:02:00", "--mem=296M", "--partition=short", "--account=proj1",
                     "--qos=low", "--constraint=avx2", "--cpus-per-task=1"):
            self.assertIn(f"#SBATCH {line}\n", text)  # time: 5 x 2 s x 2 + 60 s -> 2 min; mem: 64 x 1.5 + 200
        # A task, run the way Slurm would, completes exactly its points.
        env = dict(os.environ, SLURM_ARRAY_TASK_ID="1", SLURM_ARRAY_JOB_ID="7", FAKE_AHBM_LOG=self.log)
        p = subprocess.run(["bash", script], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        done = sorted(n for n in os.listdir(os.path.join(out, "points"))
                      if os.path.exists(os.path.join(out, "points", n, "done.json")))
        self.assertEqual(done, tasks[1])
        rc, stdout, err = self.sweep(g, "--out", out, "--collect")
        self.assertEqual(rc, 1)
        self.assertIn("12 points, 5 ok, 0 failed, 7 missing", stdout)

    def test_default_chunk_follows_the_target_duration(self):
        g = self.grid(params={"scenario.seed": list(range(40))})
        rc, _, err = self.sweep(g, "--out", self.path("out"), "--executor", "slurm", "--script-only",
                                "--point-seconds", "30", "--point-mem-mb", "1000")
        self.assertEqual(rc, 0, err)
        tasks = json.loads(read(self.path("out", "slurm", "r01", "tasks.json")))
        self.assertEqual([len(t) for t in tasks], [20, 20], "600 s target / 30 s per point")
        text = read(self.path("out", "slurm", "r01", "sweep.sbatch"))
        self.assertIn("#SBATCH --array=0-1\n", text)
        self.assertIn("#SBATCH --time=00:21:00\n", text)  # 20 x 30 s x 2 + 60 s
        self.assertIn("#SBATCH --mem=1700M\n", text)


if __name__ == "__main__":
    unittest.main(verbosity=1)
