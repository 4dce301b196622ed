#!/usr/bin/env python3
"""tools/serve_backlog.py on synthetic requests.csv files: a queue that stays short is "bounded",
one whose delay grows with every arrival is "growing"; the bins' percentiles are the nearest-rank
ones of the rows in each bin; a missing column, a value that is not a number, a missing file and a
bad --bins are errors naming what is wrong, exit 2, no table."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "serve_backlog.py")
HEADER = "workflow,ready_ns,scheduled_ns,first_token_ns\n"


def write(d, rows):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "requests.csv"), "w") as f:
        f.write(HEADER)
        for i, (ready, sched, first) in enumerate(rows):
            f.write(f"{i},{ready},{sched},{first}\n")


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        s = 1e9
        # 100 arrivals one second apart. Bounded: 0.1 s of queueing each. Growing: the i-th waits i * 0.5 s.
        write(os.path.join(tmp, "ok"), [(i * s, i * s + 0.1 * s, i * s + 0.3 * s) for i in range(100)])
        write(os.path.join(tmp, "late"), [(i * s, i * s + 0.5 * i * s, i * s + 0.5 * i * s + 0.2 * s) for i in range(100)])
        r = run(os.path.join(tmp, "ok"), os.path.join(tmp, "late"), "--bins", "4")
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
        out = r.stdout.split(os.path.join(tmp, "late"))
        check(len(out) == 2, f"both runs reported: {r.stdout}")
        if len(out) == 2:
            check("queue: bounded" in out[0], f"the short queue is bounded: {out[0]}")
            check("queue: growing" in out[1], f"the growing queue is growing: {out[1]}")
            # Bin 1 of 'late': arrivals 0..24.75 s (width 99/4), 25 rows (0..24); queue p50 is the
            # 13th smallest of 0.5 i = 6.0 s, p99 the 25th = 12.0 s; TTFT adds 0.2 s.
            lines = [l.split() for l in out[1].splitlines() if l.strip() and l.strip()[0].isdigit()]
            check(len(lines) == 4, f"4 bins: {lines}")
            if lines:
                first = lines[0]
                check(first[-5:] == ["25", "6.000", "12.000", "6.200", "12.200"], f"bin 1 of late: {first}")
        # A file without the columns: an error naming them, non-zero exit.
        bad = os.path.join(tmp, "bad")
        os.makedirs(bad)
        with open(os.path.join(bad, "requests.csv"), "w") as f:
            f.write("workflow,ready_ns\n0,0\n")
        r = run(bad)
        check(r.returncode == 2 and "first_token_ns" in r.stderr and not r.stdout, f"missing column: {r.returncode} {r.stderr}")
        # A value that is not a number: the line and the values named, exit 2, no table.
        with open(os.path.join(bad, "requests.csv"), "w") as f:
            f.write(HEADER + "0,0,x,5\n")
        r = run(bad)
        check(r.returncode == 2 and "line 2" in r.stderr and "'x'" in r.stderr and not r.stdout,
              f"bad value: {r.returncode} {r.stderr}")
        r = run(os.path.join(tmp, "ok"), bad)  # a bad second run: no table for the first either
        check(r.returncode == 2 and not r.stdout, f"bad second input: {r.returncode} {r.stdout}")
        r = run(os.path.join(tmp, "missing"))
        check(r.returncode == 2 and "requests.csv" in r.stderr, f"missing dir: {r.returncode} {r.stderr}")
        r = run(os.path.join(tmp, "ok"), "--bins", "0")
        check(r.returncode == 2 and "--bins" in r.stderr, f"bad --bins: {r.returncode} {r.stderr}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("serve_backlog: ok")


if __name__ == "__main__":
    main()
