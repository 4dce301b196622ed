#!/usr/bin/python3
"""Wall time of a 20-point sweep in-process (the Python module ahbm, one call of run_points, chips
reused between points) against the same 20 points as 20 `ahbm-sim run` processes.

usage: testbench/bench/python_sweep_bench.py [--build build] [--repeat 3]

The points: traces/fanout_8x20.json timing-only (--no-values --no-vcd) with 20 seeds on the default
hardware config (one chip for all 20 in-process). Prints each way's best wall time of --repeat runs,
the ratio, and the load average: numbers on a busy machine mean little. Both ways write the same
run directories (checked here on latency.csv).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--points", type=int, default=20)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import ahbm

    cli = os.path.join(a.build, "bin", "ahbm-sim")
    scenario = os.path.join(ROOT, "traces", "fanout_8x20.json")
    work = tempfile.mkdtemp(prefix="ahbm-pybench-")
    hw = os.path.join(work, "hw.json")
    with open(hw, "w") as f:
        json.dump({}, f)
    try:
        best_cli = best_mod = float("inf")
        for r in range(a.repeat):
            dirs = [os.path.join(work, f"cli{r}-{i}") for i in range(a.points)]
            t0 = time.monotonic()
            for i, d in enumerate(dirs):
                subprocess.run([cli, "run", scenario, "--hw", hw, "--out", d, "--no-values", "--no-vcd", "--seed",
                                str(i)], check=True, capture_output=True)
            best_cli = min(best_cli, time.monotonic() - t0)
            jobs = [{"scenario": scenario, "hw": hw, "out": os.path.join(work, f"mod{r}-{i}"),
                     "args": ["--no-values", "--no-vcd", "--seed", str(i)]} for i in range(a.points)]
            t0 = time.monotonic()
            result = ahbm.run_points(jobs)
            best_mod = min(best_mod, time.monotonic() - t0)
            assert all(code == 0 for code, _ in result), result
            for d, j in zip(dirs, jobs):
                with open(os.path.join(d, "latency.csv")) as x, open(os.path.join(j["out"], "latency.csv")) as y:
                    assert x.read() == y.read(), d
        print(f"{a.points} points, best of {a.repeat}: CLI processes {best_cli:.2f} s, in-process {best_mod:.2f} s, "
              f"ratio {best_cli / best_mod:.2f}x (load average {os.getloadavg()[0]:.1f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
