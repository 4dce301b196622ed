#!/usr/bin/python3
"""tools/policy_sweep resumes (docs/policies.md, "Validation sweep"): a point answered by the same
binary version for the same hardware is read back from DIR/points/, not simulated again; a point
kept by another version or for other hardware, or missing, is run. Uses a stand-in ahbm-sim that
logs every policy-eval it is asked for, so the test counts simulations instead of timing them."""
import csv
import json
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "tools", "policy_sweep")
SUBSET_POINTS = 27  # tools/policy_sweep's SUBSET: 3 prefixes x 3 agent counts x 3 token counts

# The stand-in: --version and nocs as the real CLI answers them (no flit-level NoCs, so only the
# ideal-NoC variants exist); policy-eval logs the scenario and answers two policies whose simulated
# time is a function of the point, so the CSV shows which answer it was built from.
FAKE = r'''#!/usr/bin/python3
import json, os, sys
if sys.argv[1] == "--version":
    print(os.environ["FAKE_VERSION"])
elif sys.argv[1] == "nocs":
    print("ideal")
elif sys.argv[1] == "policy-eval":
    sc = json.load(open(sys.argv[2]))
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(sc["name"] + "\n")
    t = float(sc["shared_prefix_tokens"] * len(sc["agents"]) * sc["agents"][0]["new_tokens"])
    def policy(name, ns):
        tile = {"tile_rows": 16, "simulated_ns": ns}
        return dict(tile, policy=name, estimate_ns=ns, error=0.0, energy_j=1e-6, edp_j_s=1e-12, largest=tile,
                    best=tile, estimate={k: 0.0 for k in ("q_ns", "remap_ns", "gemm_ns", "kv_ns", "reduce_ns",
                                                          "other_ns")})
    print(json.dumps({"policies": [policy("A", t), policy("B1", 2 * t)],
                      "auto": "A", "auto_tile_rows": 16, "simulated_winner": "A",
                      "simulated_winner_tile_rows": 16, "auto_hit": True, "auto_regret": 0.0}))
else:
    sys.exit("stand-in ahbm-sim: unexpected " + " ".join(sys.argv[1:]))
'''


class PolicySweepResume(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ahbm-policy-sweep-test-")
        os.makedirs(os.path.join(self.dir, "build", "bin"))
        exe = os.path.join(self.dir, "build", "bin", "ahbm-sim")
        with open(exe, "w") as f:
            f.write(FAKE)
        os.chmod(exe, 0o755)
        self.log = os.path.join(self.dir, "calls.txt")
        self.out = os.path.join(self.dir, "sweep")
        self.env = dict(os.environ, AHBM_BUILD_DIR=os.path.join(self.dir, "build"), FAKE_LOG=self.log,
                        FAKE_VERSION="ahbm-sim 0.0.1 (commit aaaaaaa)")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def sweep(self):
        """Runs the default variant's subset on one worker (so the log is in run order); returns the
        policy-eval calls it made and the CSV."""
        open(self.log, "w").close()
        r = subprocess.run(["/usr/bin/python3", SWEEP, "--out", self.out, "--variants", "default",
                            "--jobs", "1"],
                           capture_output=True, text=True, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.log) as f:
            calls = f.read().split()
        with open(os.path.join(self.out, "policy_sweep.csv")) as f:
            return calls, f.read()

    def point(self, name):
        return os.path.join(self.out, "points", name + ".json")

    def test_a_rerun_reuses_only_what_the_same_binary_answered_for_the_same_hardware(self):
        calls, first = self.sweep()
        self.assertEqual(len(calls), SUBSET_POINTS)
        self.assertEqual(len(set(calls)), SUBSET_POINTS)
        # Heaviest first (rows x prefix): 65536 x 64 x 256 before anything else, 2048 x 1 x 1 last.
        self.assertEqual(calls[0], "65536_64_256_default")
        self.assertEqual(calls[-1], "2048_1_1_default")
        rows = list(csv.DictReader(first.splitlines()))
        self.assertEqual(len(rows), 2 * SUBSET_POINTS)
        self.assertEqual(sorted(os.listdir(os.path.join(self.out, "points"))),
                         sorted(c + ".json" for c in calls))

        calls, again = self.sweep()
        self.assertEqual(calls, [])
        self.assertEqual(again, first)

        # Kept by another binary, kept for other hardware, missing: those three run again.
        with open(self.point("8192_8_20_default")) as f:
            k = json.load(f)
        k["version"] = "ahbm-sim 0.0.0 (commit bbbbbbb)"
        with open(self.point("8192_8_20_default"), "w") as f:
            json.dump(k, f)
        with open(self.point("2048_64_1_default")) as f:
            k = json.load(f)
        k["hw"] = {"pe": {"hbm": {"bandwidth_gbps": 25.6}}}
        k["result"]["policies"][0]["simulated_ns"] = 1.0  # a stale answer must not reach the CSV
        with open(self.point("2048_64_1_default"), "w") as f:
            json.dump(k, f)
        os.remove(self.point("65536_1_20_default"))
        calls, third = self.sweep()
        self.assertEqual(sorted(calls), ["2048_64_1_default", "65536_1_20_default", "8192_8_20_default"])
        self.assertEqual(third, first)

        # A new binary version trusts none of them.
        self.env["FAKE_VERSION"] = "ahbm-sim 0.0.2 (commit ccccccc)"
        calls, _ = self.sweep()
        self.assertEqual(len(calls), SUBSET_POINTS)


if __name__ == "__main__":
    unittest.main()
