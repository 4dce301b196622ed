#!/usr/bin/env python3
"""ahbm-sim serve stopped by Ctrl-C (SIGINT) writes what it simulated, marked partial, and exits 130.

  serve_sigint_test.py AHBM_SIM SOURCE_DIR

A serve of 60 requests of the Azure conversation trace on LLaMA-3-8B (tens of seconds of CPU) runs
with -v; at its first progress line (a step boundary has passed, the handler is installed) the
test sends SIGINT. Expected: exit 130, stdout's "interrupted:" line, and a complete summary.json
with "partial" naming fewer finished workflows than workflows, distributions over the finished
ones only (no negative latency), requests.csv present.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile


def main(cli, src):
    tmp = tempfile.mkdtemp(prefix="ahbm-sigint-")
    workload = {
        "name": "sigint",
        "scenario": os.path.join(src, "traces/llama3_8b.json"),
        "arrival": {"process": "azure_csv", "file": os.path.join(src, "traces/data/azure-llm-2023/conv.csv"),
                    "count": 60},
        "scheduler": {"step_cache": False},
    }
    path = os.path.join(tmp, "w.json")
    with open(path, "w") as f:
        json.dump(workload, f)
    out = os.path.join(tmp, "out")
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    p = subprocess.Popen([cli, "serve", path, "--out", out, "-v"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    line = p.stderr.readline()  # -v: a line per tenth of the workflows
    assert line.startswith("serve: "), f"no progress line: {line!r}"
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=600)
    assert p.returncode == 130, (p.returncode, stdout, stderr)
    assert "interrupted: " in stdout, stdout
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    part = s["partial"]
    assert part["workflows"] == 60 and part["workflows_finished"] < 60, part
    assert part["simulated_ns"] == s["end_ns"] > 0, part
    e2e = s["requests"]["end_to_end"]
    assert e2e["count"] == part["requests_finished"], (e2e, part)
    assert e2e["count"] == 0 or e2e["min_ns"] >= 0, e2e
    assert os.path.exists(os.path.join(out, "requests.csv"))
    print(f"ok: stopped after {part['workflows_finished']} of 60 workflows at {part['simulated_ns'] / 1e9:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
