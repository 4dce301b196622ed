#!/usr/bin/python3
"""Wall time of a 1,000-point timing-only sweep: local -j 2 vs a single-node Slurm cluster.

usage: testbench/bench/sweep_slurm_bench.py [--cli build/bin/ahbm-sim] [--points-per-task K ...]

The grid: fanout_8x20 --no-values --no-vcd over 10 shared prefixes x 10 x 10 new-token counts of two
agents. The Slurm runs use the default chunking (sized from a probe; --throttle = the CPUs) and,
for each --points-per-task K given, that chunk size. The scheduling overhead per point is
(Slurm wall - local wall) / points; on a busy machine the points themselves slow down by different
amounts in each run, so the table also gives each run's time outside points:
(wall - sum of the points' own wall times / CPUs) / points. Needs root and slurm-wlm + munge (testbench/e2e/slurm_cluster.py).
Prints the load average before and after each run: the numbers mean little on a busy machine.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testbench", "e2e"))
from slurm_cluster import SlurmCluster  # noqa: E402

SWEEP = os.path.join(ROOT, "tools", "sweep")


def point_seconds(out):
    total = 0.0
    for name in os.listdir(os.path.join(out, "points")):
        with open(os.path.join(out, "points", name, "done.json")) as f:
            total += json.load(f)["seconds"]
    return total


def timed(args, env, log):
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    with open(log, "w") as f:
        rc = subprocess.run(["/usr/bin/python3", SWEEP] + args, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    wall = time.monotonic() - t0
    if rc != 0:
        sys.exit(f"sweep_slurm_bench: {' '.join(args)} exited {rc}; see {log}")
    return wall, load, os.getloadavg()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "ahbm-sim"))
    ap.add_argument("--points-per-task", type=int, action="append", default=[])
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    cpus = os.cpu_count() or 1
    work = tempfile.mkdtemp(prefix="ahbm-sweep-bench-")
    grid = os.path.join(work, "grid.json")
    with open(grid, "w") as f:
        json.dump({"scenario": os.path.join(ROOT, "traces", "fanout_8x20.json"),
                   "parameters": {"scenario.shared_prefix_tokens": [1024 * k for k in range(1, 11)],
                                  "scenario.agents.0.new_tokens": list(range(2, 21, 2)),
                                  "scenario.agents.1.new_tokens": list(range(2, 21, 2))},
                   "run_args": ["--no-vcd", "--no-values"]}, f)
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    n = 1000
    rows = []
    wall, l0, l1 = timed([grid, "--out", os.path.join(work, "local"), "-j", str(cpus), "--cli", a.cli], env,
                         os.path.join(work, "local.log"))
    rows.append(("local -j %d" % cpus, wall, l0, l1, None, point_seconds(os.path.join(work, "local"))))
    local_wall = wall
    with SlurmCluster(log=lambda m: print(m, file=sys.stderr)) as c:
        senv = dict(c.env, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        for ppt in [None] + a.points_per_task:
            out = os.path.join(work, f"slurm-{ppt or 'auto'}")
            args = [grid, "--out", out, "--executor", "slurm", "--throttle", str(cpus), "--poll-seconds", "0.5",
                    "--cli", a.cli] + (["--points-per-task", str(ppt)] if ppt else [])
            wall, l0, l1 = timed(args, senv, out + ".log")
            tasks = json.load(open(os.path.join(out, "slurm", "r01", "tasks.json")))
            same = open(os.path.join(out, "results.csv")).read() == \
                open(os.path.join(work, "local", "results.csv")).read()
            rows.append((f"slurm, {len(tasks)} tasks of <= {max(map(len, tasks))}" +
                         (" (probe: 2 points here)" if not ppt else ""), wall, l0, l1, same, point_seconds(out)))
    print(f"{n} points, {cpus} CPUs; work directory {work}")
    print(f"{'executor':48s} {'wall s':>7s} {'vs local ms/pt':>14s} {'mean pt s':>9s} "
          f"{'outside pts ms/pt':>17s} {'load 1m':>13s} same csv")
    for name, wall, l0, l1, same, secs in rows:
        over = "" if same is None else f"{(wall - local_wall) / n * 1000:.1f}"
        print(f"{name:48s} {wall:7.1f} {over:>14s} {secs / n:9.3f} {(wall - secs / cpus) / n * 1000:17.1f} "
              f"{l0:6.1f}->{l1:<6.1f} {'' if same is None else same}")
    if not a.keep:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
