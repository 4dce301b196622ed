#!/usr/bin/env python3
"""Does a serve run keep up with its arrivals? The queue over the run, from requests.csv.

    /usr/bin/python3 tools/serve_backlog.py OUT_DIR [OUT_DIR...] [--bins 4]

Splits each run's requests by arrival time (ready_ns) into equal time bins and prints, per bin,
the requests, the queueing delay (scheduled_ns - ready_ns) p50/p99 and TTFT p50/p99, then the
run's verdict: "bounded" when the last bin's median queueing delay is at most 1 s or at most
twice the first bin's, "growing" otherwise (a queue that grows for the whole run: the system
does not keep up with the trace; docs/serving.md, "The whole hour"). Exit status 0 for every
verdict; 2 for an unreadable input.
"""
import argparse
import csv
import math
import os
import sys


def fail(message):
    """An input error: the message on stderr, exit status 2, nothing printed for the run."""
    print(f"serve_backlog.py: {message}", file=sys.stderr)
    sys.exit(2)


def percentile(values, q):
    """Nearest-rank percentile (as summary.json's): the ceil(q * n)-th smallest."""
    if not values:
        return float("nan")
    v = sorted(values)
    return v[max(0, math.ceil(q * len(v)) - 1)]


def read_requests(out_dir):
    path = os.path.join(out_dir, "requests.csv")
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    need = {"ready_ns", "scheduled_ns", "first_token_ns"}
    if rows and not need <= set(rows[0]):
        fail(f"{path}: columns {sorted(need - set(rows[0]))} missing (a serve requests.csv?)")
    out = []
    for line, r in enumerate(rows, start=2):
        try:
            ready, sched, first = float(r["ready_ns"]), float(r["scheduled_ns"]), float(r["first_token_ns"])
        except (TypeError, ValueError):
            fail(f"{path}: line {line}: ready_ns, scheduled_ns, first_token_ns must be numbers "
                 f"(got {r['ready_ns']!r}, {r['scheduled_ns']!r}, {r['first_token_ns']!r})")
        out.append((ready, sched - ready if sched >= 0 else float("nan"), first - ready if first >= 0 else float("nan")))
    return out


def backlog(requests, bins):
    """Per arrival-time bin: (start s, end s, count, queue p50, queue p99, TTFT p50, TTFT p99) in s."""
    if not requests:
        return []
    t0 = min(r[0] for r in requests)
    t1 = max(r[0] for r in requests)
    width = (t1 - t0) / bins if t1 > t0 else 1.0
    table = []
    for b in range(bins):
        lo, hi = t0 + b * width, t0 + (b + 1) * width
        sel = [r for r in requests if lo <= r[0] < hi or (b == bins - 1 and r[0] == t1)]
        q = [r[1] for r in sel if not math.isnan(r[1])]
        t = [r[2] for r in sel if not math.isnan(r[2])]
        table.append((lo * 1e-9, hi * 1e-9, len(sel), percentile(q, 0.5) * 1e-9, percentile(q, 0.99) * 1e-9,
                      percentile(t, 0.5) * 1e-9, percentile(t, 0.99) * 1e-9))
    return table


def verdict(table):
    first, last = table[0][3], table[-1][3]
    if math.isnan(last):
        return "growing"
    return "bounded" if last <= 1.0 or last <= 2.0 * first else "growing"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", help="serve output directories (each with requests.csv)")
    ap.add_argument("--bins", type=int, default=4, help="arrival-time bins (default 4)")
    a = ap.parse_args()
    if a.bins < 1 or a.bins > 1000:
        fail(f"--bins {a.bins} is out of range (allowed: 1 to 1000)")
    tables = [(d, backlog(read_requests(d), a.bins)) for d in a.dirs]  # every input read before any output
    for d, table in tables:
        print(d)
        if not table:
            print("  no requests")
            continue
        print("  arrivals (s)      requests  queue p50 (s)  queue p99 (s)  TTFT p50 (s)  TTFT p99 (s)")
        for lo, hi, n, q50, q99, t50, t99 in table:
            print(f"  {lo:7.1f}-{hi:7.1f}  {n:8d}  {q50:13.3f}  {q99:13.3f}  {t50:12.3f}  {t99:12.3f}")
        print(f"  queue: {verdict(table)}")


if __name__ == "__main__":
    main()
