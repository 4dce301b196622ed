"""A stand-in for ahbm-sim in tools/sweep's tests: fast, deterministic, and able to fail on cue.

Used two ways: as the CLI (`fake_ahbm.py run SCENARIO --hw HW --out DIR [--set K=V ...] [args]`,
`fake_ahbm.py serve WORKLOAD --hw HW --out DIR [...]` and `fake_ahbm.py hw-config [HW] [--set K=V ...]`,
copied to an executable by the test) and as the in-process module `ahbm` (run_points). serve
resolves the workload's "scenario" as ahbm-sim does (next to the workload, else the working
directory) and its summary depends on that scenario's content. `--set` is applied to the hardware config as ahbm-sim does
(JSON value); `pe.dma.buffers` outside [1, 8] is refused with exit 2 as ahbm-sim refuses it. The "summary" is a pure
function of the scenario, hardware config and arguments, so both ways give the same results.csv.
Cues, in the scenario: "fake_exit": N exits N with an error naming a field; "fake_kill_once":
PATH is killed by SIGKILL the first time (PATH does not exist yet), then succeeds.
Every run appends one line to $FAKE_AHBM_LOG: "cli SCENARIO", "cli serve WORKLOAD" or "module N-jobs"; hw-config
appends "hw-config K=V ...".
"""
import json
import os
import signal
import sys


def note(line):
    with open(os.environ["FAKE_AHBM_LOG"], "a") as f:
        f.write(line + "\n")


def apply_sets(hw, args):
    """(hw with every `--set K=V` of args applied, the other args, error message or "")."""
    rest, i = [], 0
    while i < len(args):
        if args[i] == "--set":
            key, _, text = args[i + 1].partition("=")
            node = hw
            for k in key.split(".")[:-1]:
                node = node.setdefault(k, {})
            node[key.split(".")[-1]] = json.loads(text)
            i += 2
        else:
            rest.append(args[i])
            i += 1
    buffers = hw.get("pe", {}).get("dma", {}).get("buffers", 2)
    if not 1 <= buffers <= 8:
        return hw, rest, f"ahbm-sim: error: --set pe.dma.buffers: value {buffers} is out of range (allowed: [1, 8])"
    return hw, rest, ""


def load_inputs(doc_path, hw_path, args):
    """(the scenario or workload document, hw with the --set options applied, the other args,
    error message or "")."""
    with open(doc_path) as f:
        doc = json.load(f)
    with open(hw_path) as f:
        return (doc,) + apply_sets(json.load(f), args)


def run_one(scenario_path, hw_path, out, args):
    """Returns (exit status, message) like `ahbm-sim run`."""
    sc, hw, args, bad = load_inputs(scenario_path, hw_path, args)
    if bad:
        return 2, bad
    if "fake_exit" in sc:
        return sc["fake_exit"], f"ahbm-sim run: error: {scenario_path}: fake_exit: value {sc['fake_exit']} (cue)"
    once = sc.get("fake_kill_once")
    if once and not os.path.exists(once):
        open(once, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    prefix = sc.get("shared_prefix_tokens", 0)
    buffers = hw.get("pe", {}).get("dma", {}).get("buffers", 2)
    os.makedirs(out)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"total_ns": prefix * 3.5 / buffers, "phases": {"fanout": {"ns": prefix / 7}},
                   "seed": sc.get("seed", 0), "note": " ".join(args),
                   "config": {"scenario_file": scenario_path}}, f)
    return 0, ""


def serve_one(workload_path, hw_path, out, args):
    """Returns (exit status, message) like `ahbm-sim serve`: throughput rises with the arrival rate
    up to a saturation the DMA buffers set; the summary echoes hw and workload as serve's does."""
    w, hw, args, bad = load_inputs(workload_path, hw_path, args)
    if bad:
        return 2, bad
    sc_path = w["scenario"]
    if not os.path.isabs(sc_path) and os.path.exists(os.path.join(os.path.dirname(workload_path), sc_path)):
        sc_path = os.path.join(os.path.dirname(workload_path), sc_path)
    if not os.path.exists(sc_path):
        return 2, f"ahbm-sim serve: error: {workload_path}: scenario: \"{w['scenario']}\" not found"
    with open(sc_path) as f:
        sc = json.load(f)
    rate = w["arrival"]["rate_per_s"]
    buffers = hw.get("pe", {}).get("dma", {}).get("buffers", 2)
    saturation = 500.0 * buffers
    os.makedirs(out)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"throughput": {"tokens_per_s": 10 * min(rate, saturation)},
                   "steps": {"chip_busy_fraction": min(1.0, rate / saturation)},
                   "requests": {"ttft": {"p99_ns": 1000 + sc.get("shared_prefix_tokens", 0)}},
                   "scheduler": w.get("scheduler", {}).get("policy", "fcfs"), "note": " ".join(args),
                   "hw": hw, "workload": w}, f)
    return 0, ""


def run_points(jobs):
    note(f"module {len(jobs)}")
    return [(serve_one if j.get("command") == "serve" else run_one)(j.get("workload") or j["scenario"], j["hw"],
                                                                      j["out"], j["args"]) for j in jobs]


def hw_config(argv):
    hw = {}
    if argv and argv[0] != "--set":
        with open(argv[0]) as f:
            hw = json.load(f)
        argv = argv[1:]
    note("hw-config " + " ".join(argv[1::2]))
    hw, _, bad = apply_sets(hw, argv)
    if bad:
        print(bad, file=sys.stderr)
        sys.exit(2)
    print(json.dumps(hw))
    sys.exit(0)


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[0] == "hw-config":
        hw_config(argv[1:])
    assert argv[0] in ("run", "serve") and argv[2] == "--hw" and argv[4] == "--out", argv
    note(f"cli {argv[1]}" if argv[0] == "run" else f"cli serve {argv[1]}")
    code, msg = (run_one if argv[0] == "run" else serve_one)(argv[1], argv[3], argv[5], argv[6:])
    if msg:
        print(msg, file=sys.stderr)
    sys.exit(code)
