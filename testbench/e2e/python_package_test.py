#!/usr/bin/python3
"""`pip install .` (pyproject.toml, setup.py) as docs/python.md gives it: a virtual environment of
Debian's /usr/bin/python3 with its site packages (setuptools, numpy, pandas), the package built
without network (--no-build-isolation --no-index), then `import ahbm; ahbm.run(...)` from outside
the source tree gives the CLI's result, help() shows the argument docs, and the stubs the package
installs pass `mypy --strict` on the example notebook's code.

usage: python_package_test.py SOURCE_DIR AHBM_SIM [PREBUILT_MODULE]
With PREBUILT_MODULE (what CTest passes: the build's ahbm/_ahbm*.so) setup.py copies that module
(AHBM_PREBUILT_MODULE) instead of building it; without, setup.py runs the CMake build of the
target ahbm_python (CMAKE_BUILD_PARALLEL_LEVEL=2; through ccache when it is on PATH), as a plain
`pip install .` does on a fresh machine."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

src, cli = sys.argv[1], sys.argv[2]
prebuilt = sys.argv[3] if len(sys.argv) > 3 else None


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    print(f"{time.monotonic() - t:6.1f} s  {' '.join(cmd[:4])} ...", file=sys.stderr)
    return p.stdout


if not shutil.which("mypy"):
    fail("mypy not found: tools/setup.sh installs Debian's mypy")
tmp = tempfile.mkdtemp(prefix="ahbm-pip-test-")
try:
    venv = os.path.join(tmp, "venv")
    py = os.path.join(venv, "bin", "python")
    run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AHBM_PREBUILT_MODULE")}
    env["AHBM_PIP_BUILD_DIR"] = os.path.join(tmp, "pip-build")  # nothing written into the source tree
    if prebuilt:
        env["AHBM_PREBUILT_MODULE"] = prebuilt
    else:
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        if shutil.which("ccache"):
            env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
    run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-cache-dir", src], env=env, cwd=tmp)

    # Imported from the venv, not the build tree: no PYTHONPATH, cwd outside the source.
    scenario = os.path.join(src, "traces", "fanout_8x20.json")
    code = ("import ahbm, json, sys, pydoc; r = ahbm.run(sys.argv[1], values=False); "
            "print(json.dumps({'file': ahbm.__file__, 'total_ns': r['summary']['total_ns'], "
            "'spans': len(r['spans']['start_ns']), 'help': pydoc.render_doc(ahbm.run)}))")
    got = json.loads(run([py, "-c", code, scenario], env=env, cwd=tmp))
    if not got["file"].startswith(venv):
        fail(f"ahbm imported from {got['file']}, not the venv {venv}")
    out = os.path.join(tmp, "cli")
    run([cli, "run", scenario, "--no-values", "--no-vcd", "--out", out])
    with open(os.path.join(out, "summary.json")) as f:
        want = json.load(f)["total_ns"]
    if got["total_ns"] != want:
        fail(f"ahbm.run total_ns {got['total_ns']} != ahbm-sim run's {want}")
    if got["spans"] == 0:
        fail("ahbm.run returned no spans")
    for line in ("watchdog_ns: float, default 1e6, simulated ns", "power_window_ns: int or None, default None"):
        if line not in got["help"]:
            fail(f"help(ahbm.run) lacks {line!r}")
    pkg = os.path.dirname(got["file"])
    for f in ("__init__.pyi", "py.typed"):
        if not os.path.exists(os.path.join(pkg, f)):
            fail(f"the installed package has no {f}")

    # The notebook's code cells, type-checked against the installed stubs.
    with open(os.path.join(src, "examples", "notebook", "quickstart.ipynb")) as f:
        cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    nb = os.path.join(tmp, "quickstart.py")
    with open(nb, "w") as f:
        f.write("\n\n".join("".join(c["source"]) for c in cells) + "\n")
    # Debian's pandas and matplotlib ship no types (no py.typed; pandas-stubs is not packaged):
    # they are Any to mypy. numpy's types and ahbm's stubs are checked.
    config = os.path.join(tmp, "mypy.ini")
    with open(config, "w") as f:
        f.write("[mypy]\nstrict = True\n[mypy-pandas.*,matplotlib.*]\nignore_missing_imports = True\n")
    mypy = ["mypy", "--strict", "--config-file", config, "--no-incremental", "--cache-dir",
            os.path.join(tmp, "mypy-cache"), "--python-executable", py]
    run(mypy + [nb], cwd=tmp)
    # ...and the stubs are what mypy used: a misspelt keyword is refused.
    bad = os.path.join(tmp, "bad.py")
    with open(bad, "w") as f:
        f.write("import ahbm\nahbm.run('s.json', polcy='A')\n")
    p = subprocess.run(mypy + [bad], capture_output=True, text=True, cwd=tmp)
    if p.returncode == 0 or 'Unexpected keyword argument "polcy" for "run"' not in p.stdout:
        fail(f"mypy did not check ahbm.run's keywords against the stubs:\n{p.stdout}{p.stderr}")
    print("ok: pip install, ahbm.run from the venv, mypy --strict on the notebook")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
