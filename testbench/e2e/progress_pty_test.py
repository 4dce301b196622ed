#!/usr/bin/python3
"""Every long command shows progress on a terminal and is silent with -q (issue 44, item 2).

Each command runs three ways on small inputs: with stderr on a pseudo-terminal (pty module), where
its progress line appears ("\\r\\033[K" rewrites) and is cleared at the end; on a pseudo-terminal
with -q, where stderr stays empty; and with stderr on a pipe, where no progress is printed either
(and -v prints plain lines instead). What the command prints on stdout and writes to its output
files is the same every way.

usage: progress_pty_test.py AHBM_SIM SOURCE_DIR
"""
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile

CLI, SRC = sys.argv[1], sys.argv[2]
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def on_pty(argv):
    """(exit code, stdout, stderr) with stderr (and stdin) on a pseudo-terminal."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=slave, stdout=subprocess.PIPE, stderr=slave, env=ENV, cwd=SRC)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        err += chunk
    out = p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out.decode(), err.decode(errors="replace")


def on_pipe(argv):
    p = subprocess.run(argv, capture_output=True, text=True, env=ENV, cwd=SRC, timeout=120)
    return p.returncode, p.stdout, p.stderr


def files(d):
    """The output directory's files and their bytes."""
    got = {}
    for root, _, names in os.walk(d):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                got[os.path.relpath(path, d)] = f.read()
    return got


tmp = tempfile.mkdtemp(prefix="ahbm-progress-")
try:
    # A small serving workload: the example mix with 6 workflows.
    with open(os.path.join(SRC, "traces/serve/agentic_mix.json")) as f:
        w = json.load(f)
    w["arrival"]["count"] = 6
    w["scenario"] = os.path.join(SRC, "traces/serve", w["scenario"])
    workload = os.path.join(tmp, "mix6.json")
    with open(workload, "w") as f:
        json.dump(w, f)

    # name, argv (an "OUT" argument is replaced by a fresh directory), progress text, -v line text
    commands = [
        ("serve", [CLI, "serve", workload, "--out", "OUT"], "serve: ", "/6 workflows"),
        ("policy-eval", [CLI, "policy-eval", "traces/fanout_8x20.json"], "policy-eval: ", "candidates simulated"),
        ("hbm-bench", [CLI, "hbm-bench", "--bytes", "2097152"], "hbm-bench: ", "/64 chunks"),
        ("noc-bench", [CLI, "noc-bench", "--noc", "mesh", "--sweep", "0.1,0.2", "--cycles", "2000", "--warmup", "200"],
         "noc-bench sweep: ", "/2 rates"),
        ("coll-bench", [CLI, "coll-bench", "--network", "ring", "--chips", "4", "-b", "1K", "-e", "64K", "-f", "4"],
         "coll-bench: ", "/4 sizes"),
        ("run", [CLI, "run", "traces/fanout_8x20.json", "--no-values", "--no-vcd", "--out", "OUT"], "step 1/", None),
    ]
    for name, argv, text, vline in commands:
        runs = {}
        for mode in ("pty", "pty -q", "pipe", "pipe -v"):
            out_dir = os.path.join(tmp, f"{name}-{mode.replace(' ', '')}")
            a = [out_dir if x == "OUT" else x for x in argv]
            if mode.endswith("-q"):
                a.append("-q")
            if mode.endswith("-v"):
                a.append("-v")
            rc, out, err = (on_pty if mode.startswith("pty") else on_pipe)(a)
            check(rc == 0, f"{name} ({mode}): exit {rc}: {err[-500:]}")
            runs[mode] = (out.replace(out_dir, "OUT"), err, files(out_dir) if "OUT" in argv else {})
        _, err, _ = runs["pty"]
        check("\r\033[K" + text in err, f"{name}: no progress line on a terminal: {err[-300:]!r}")
        check(err.endswith("\r\033[K"), f"{name}: the progress line is not cleared at the end: {err[-100:]!r}")
        check(runs["pty -q"][1] == "", f"{name} -q: stderr not empty on a terminal: {runs['pty -q'][1][-300:]!r}")
        check(runs["pipe"][1] == "", f"{name}: stderr not empty on a pipe: {runs['pipe'][1][-300:]!r}")
        if vline:
            v = runs["pipe -v"][1]
            check("\r" not in v and vline in v and v.endswith("\n"), f"{name} -v: no plain per-item lines: {v[-300:]!r}")
        for mode in ("pty -q", "pipe", "pipe -v"):
            check(runs[mode][0] == runs["pty"][0], f"{name} ({mode}): stdout differs from the terminal run's")
            # Output files byte-identical whatever the terminal text.
            check(runs[mode][2] == runs["pty"][2], f"{name} ({mode}): output files differ from the terminal run's")
        print(f"{name}: ok", flush=True)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print(f"progress_pty_test: {len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("progress_pty_test: ok")
