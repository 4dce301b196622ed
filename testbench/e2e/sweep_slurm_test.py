#!/usr/bin/python3
"""tools/sweep --executor slurm on a real single-node Slurm cluster (issue 24; docs/sweeps.md).

A 40-point timing-only grid runs locally (-j 2) and on the cluster (5 points per array task, at most
2 tasks at once). While the array runs, one running task is cancelled: the sweep's retry round must
rerun only that task's unfinished points, and results.csv must be byte-identical to the local one.
Points inside array tasks wait at a gate (a wrapper around ahbm-sim) until a task has been chosen
and cancelled; the chosen task is held before scancel by a file of its own, so it never runs a point
however late its processes receive the signal (a point takes under 0.1 s: CI once saw Slurm report
the task gone, the gate open, and the task finish its 5 points before the kill reached them).
Then a grid change makes 4 points stale: a detached submission reruns only those (a second
submission while it is queued is refused with exit 2), --collect merges them; lost results are
listed as missing by --collect (exit 1) and a resubmission reruns only them.

Exit 77 (CTest: skipped) when Slurm cannot start here: not root, or slurm-wlm/munge missing.
Every daemon and job process the test started is stopped by PID, pass or fail.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from slurm_cluster import CannotStart, SlurmCluster  # noqa: E402

SWEEP = os.path.join(ROOT, "tools", "sweep")
SKIP = 77
BUDGET_S = 700  # below CTest's TIMEOUT (900 s), so that the cluster is stopped by this test, not killed
PREFIXES = [1024, 2048, 4096, 8192]
NEW_TOKENS = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]  # x 4 prefixes = 40 points


class Failure(Exception):
    pass


def on_signal(signum, _frame):  # SIGTERM, or the budget's SIGALRM: unwind so that `with` stops the cluster
    raise Failure(f"stopped by signal {signum}" + (f" after the {BUDGET_S} s budget" if signum == signal.SIGALRM else ""))


def die_with_test():
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def check(cond, what):
    if not cond:
        raise Failure(what)
    print(f"  ok: {what}", flush=True)


def grid(path, new_tokens):
    with open(path, "w") as f:
        json.dump({"scenario": os.path.join(ROOT, "traces", "fanout_8x20.json"),
                   "parameters": {"scenario.shared_prefix_tokens": PREFIXES,
                                  "scenario.agents.0.new_tokens": new_tokens},
                   "run_args": ["--no-vcd", "--no-values"]}, f)


def sweep(args, env, log, timeout=600):
    with open(log, "w") as f:
        p = subprocess.run(["/usr/bin/python3", SWEEP] + args, stdout=f, stderr=subprocess.STDOUT, env=env,
                           timeout=timeout, preexec_fn=die_with_test)
    return p.returncode, slurp(log)


def slurp(path):
    with open(path, "rb") as f:
        return f.read().decode(errors="replace")


def same_results(a, b):
    return slurp(os.path.join(a, "results.csv")) == slurp(os.path.join(b, "results.csv"))


def hold_path(work, task):
    """The file that holds array task TASK ("JOB_INDEX", as squeue prints it) at the gate."""
    return os.path.join(work, f"hold-{task}")


def gated_cli(work, cli):
    """A wrapper that holds every point run inside a Slurm array task while WORK/gate exists, and
    the points of task J_I while WORK/hold-J_I exists (120 s at most, so a failing test cannot hang a
    task), then execs the real ahbm-sim."""
    gate, path = os.path.join(work, "gate"), os.path.join(work, "ahbm-sim-gated")
    with open(gate, "w"):
        pass
    hold = hold_path(work, "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                'if [ -n "$SLURM_ARRAY_TASK_ID" ]; then\n'
                f"  n=0; while {{ [ -e '{gate}' ] || [ -e \"{hold}\" ]; }} && [ $n -lt 2400 ]; do\n"
                "    sleep 0.05; n=$((n + 1))\n"
                "  done\n"
                "fi\n"
                f"exec '{cli}' \"$@\"\n")
    os.chmod(path, 0o755)
    return gate, path


def run(c, work, real_cli):
    env = dict(c.env, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    gate, cli = gated_cli(work, real_cli)
    g = os.path.join(work, "grid.json")
    grid(g, NEW_TOKENS)
    local, cluster = os.path.join(work, "local"), os.path.join(work, "slurm")
    common = ["--cli", cli]
    slurm_args = ["--executor", "slurm", "--points-per-task", "5", "--throttle", "2", "--poll-seconds", "0.3"]

    print("1. local executor, -j 2", flush=True)
    rc, log = sweep([g, "--out", local, "-j", "2"] + common, env, os.path.join(work, "local.log"))
    check(rc == 0, f"local sweep of 40 points exits 0 (got {rc})\n{log}")

    print("2. slurm executor, wait mode; one running task is cancelled", flush=True)
    log_path = os.path.join(work, "slurm.log")
    with open(log_path, "w") as f:
        proc = subprocess.Popen(["/usr/bin/python3", SWEEP, g, "--out", cluster, "--retries", "2"] + slurm_args + common,
                                stdout=f, stderr=subprocess.STDOUT, env=env, preexec_fn=die_with_test)
    killed, max_running, deadline = None, 0, time.monotonic() + 600
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                raise Failure("the slurm sweep did not finish in 600 s\n" + slurp(log_path))
            jobs = json.loads(slurp(os.path.join(cluster, "slurm", "jobs.json"))) \
                if os.path.exists(os.path.join(cluster, "slurm", "jobs.json")) else []
            if jobs:
                q = c.run(["squeue", "-h", "-j", jobs[0]["job"], "-o", "%i %T"]).stdout.split("\n")
                running = [line.split()[0] for line in q if line.endswith(" RUNNING")]
                max_running = max(max_running, len(running))
                if running and killed is None:
                    killed = running[0]
                    # Held before the cancel: the gate opens for the others at once, and this task
                    # cannot finish a point however late the kill reaches its processes.
                    with open(hold_path(work, killed), "w"):
                        pass
                    r = c.run(["scancel", killed])
                    print(f"  cancelled array task {killed} while it ran (scancel rc {r.returncode})", flush=True)
                    os.remove(gate)  # the other tasks go on
            time.sleep(0.1)
    finally:
        for f in [gate] + ([hold_path(work, killed)] if killed else []):
            if os.path.exists(f):
                os.remove(f)
        if proc.poll() is None:
            proc.kill()
    log = slurp(log_path)
    check(proc.returncode == 0, f"slurm sweep exits 0 after its retry round (got {proc.returncode})\n{log}")
    check(killed is not None, "a running array task was seen and cancelled")
    check(max_running <= 2, f"the throttle holds: at most 2 tasks ran at once (saw {max_running})")
    r1 = os.path.join(cluster, "slurm", "r01")
    tasks1 = json.loads(slurp(os.path.join(r1, "tasks.json")))
    script1 = slurp(os.path.join(r1, "sweep.sbatch"))
    check(all(1 <= len(t) <= 5 for t in tasks1), f"round 1 is chunked: {[len(t) for t in tasks1]} points per task")
    check(re.search(rf"#SBATCH --array=0-{len(tasks1) - 1}%2\n", script1) is not None, "array spec with %2 throttle")
    check(re.search(r"#SBATCH --time=\d\d:\d\d:00\n", script1) and re.search(r"#SBATCH --mem=\d+M\n", script1),
          "time limit and memory request derived from the probe's estimates")
    m = re.search(r"round 2 of 3: rerunning (\d+) point", log)
    idx = int(killed.split("_")[1])
    check(m is not None and 1 <= int(m.group(1)) <= len(tasks1[idx]),
          f"round 2 reran only points of the cancelled task ({m.group(1) if m else 'none'} of {len(tasks1[idx])})")
    tasks2 = json.loads(slurp(os.path.join(cluster, "slurm", "r02", "tasks.json")))
    check(set(sum(tasks2, [])) <= set(tasks1[idx]), "round 2's points all belong to the cancelled task")
    check(same_results(local, cluster), "results.csv is byte-identical to the local executor's")
    logs = os.listdir(os.path.join(r1, "logs"))
    check(len(logs) == len(tasks1) and all(re.fullmatch(r"task-\d+_\d+\.out", n) for n in logs),
          f"one Slurm log per array task ({len(logs)})")
    check(all(" run " in slurp(os.path.join(cluster, "points", f"p{i:04d}", "log.txt")) for i in range(40)),
          "every point has its own log.txt with its ahbm-sim command")

    print("3. a grid change: 4 stale points, detached submission, collect", flush=True)
    grid(g, NEW_TOKENS[:-1] + [22])
    rc, log = sweep([g, "--out", cluster, "--detach"] + slurm_args + common, env, os.path.join(work, "detach.log"))
    check(rc == 0 and "submitted job" in log, f"detached submission exits 0\n{log}")
    check("running 4 (4 stale)" in log, "only the 4 points whose scenario changed are submitted")
    rc, log = sweep([g, "--out", cluster] + slurm_args + common, env, os.path.join(work, "again.log"))
    check(rc == 2 and "still queued or running" in log and len(log.strip().splitlines()) == 1,
          f"a resubmission while the job is queued is refused with one line and exit 2: {log.strip()}")
    job = json.loads(slurp(os.path.join(cluster, "slurm", "jobs.json")))[-1]["job"]
    end = time.monotonic() + 300
    while c.run(["squeue", "-h", "-j", job]).stdout.strip():
        if time.monotonic() > end:
            raise Failure(f"job {job} did not finish in 300 s")
        time.sleep(0.3)
    rc, log = sweep([g, "--out", cluster, "--collect"] + common, env, os.path.join(work, "collect.log"))
    check(rc == 0 and "40 ok" in log, f"--collect merges the detached job's points: {log.strip()}")
    rc, log = sweep([g, "--out", local, "-j", "2"] + common, env, os.path.join(work, "local2.log"))
    check(rc == 0 and "running 4 (4 stale)" in log, "the local executor reruns the same 4 stale points")
    check(same_results(local, cluster), "results.csv is still byte-identical to the local executor's")

    print("4. lost results: collect lists them, a resubmission reruns only them", flush=True)
    os.remove(os.path.join(cluster, "points", "p0005", "done.json"))
    shutil.rmtree(os.path.join(cluster, "points", "p0006", "run"))
    rc, log = sweep([g, "--out", cluster, "--collect"] + common, env, os.path.join(work, "collect2.log"))
    check(rc == 1 and "p0005 missing: not run" in log and "p0006 missing" in log and "38 ok" in log,
          f"--collect exits 1 and lists the 2 missing points\n{log}")
    rc, log = sweep([g, "--out", cluster] + slurm_args + common, env, os.path.join(work, "resubmit.log"))
    check(rc == 0 and "running 2" in log, f"the resubmission reruns only the 2 missing points\n{log}")
    check(same_results(local, cluster), "results.csv is byte-identical after the resubmission")


def main():
    cli = os.environ.get("AHBM_CLI") or os.path.join(ROOT, "build", "bin", "ahbm-sim")
    if not os.access(cli, os.X_OK):
        print(f"sweep_slurm_test: {cli}: no ahbm-sim binary (set AHBM_CLI)", file=sys.stderr)
        return 1
    t0 = time.monotonic()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(BUDGET_S)
    work = tempfile.mkdtemp(prefix="ahbm-sweep-e2e-")
    try:
        with SlurmCluster() as c:
            try:
                run(c, work, cli)
            except BaseException:
                print(c.logs(), file=sys.stderr)
                raise
    except CannotStart as e:
        print(f"SKIPPED: sweep_slurm_test: {e}")
        return SKIP
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        print(f"(work directory kept: {work})", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"sweep_slurm_test: passed in {time.monotonic() - t0:.1f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
