#!/usr/bin/python3
"""tools/plot's layout and breakdown (docs/outputs.md, "Plots") on synthetic run directories: figures
grow with their rows so labels never overprint, the Gantt chart is paginated at 8 KV-head groups,
and the latency breakdown reports each activity class on its own, overlaps included."""
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLOT = os.path.join(ROOT, "tools", "plot")
ROW_PX, PER_PAGE = 12, 160  # tools/plot's ROW_PX and GANTT_ROWS_PER_PAGE


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def span(name, cat, comp, phase, start, end):
    return {"ph": "X", "name": name, "cat": cat, "ts": start / 1000.0, "dur": (end - start) / 1000.0, "pid": 1,
            "tid": 1, "args": {"component": comp, "phase": phase, "start_ns": start, "end_ns": end}}


def write_run(d, events, comps):
    os.makedirs(d)
    with open(os.path.join(d, "trace.json"), "w") as f:
        json.dump({"traceEvents": events}, f)
    with open(os.path.join(d, "stats.json"), "w") as f:
        json.dump({"components": {c: {"spans": 1, "utilisation": 0.5} for c in comps}}, f)


class PlotLayout(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ahbm-plot-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def plot(self, run):
        out = os.path.join(self.dir, "png")
        p = subprocess.run(["/usr/bin/python3", PLOT, run, "--out", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return out

    def test_eight_groups_paginate_and_every_row_has_its_pixels(self):
        events, comps = [], []
        for g in range(8):
            for c in range(4):
                comps.append(f"group{g}.cube{c}.reducer")
                for p in range(8):
                    comps += [f"group{g}.cube{c}.pe{p}", f"group{g}.cube{c}.pe{p}.dma"]
        for i, comp in enumerate(comps):
            events.append(span("gemm_qk", "local GEMM", comp, "fanout", 10 * i, 10 * i + 50))
        rows = len(comps)  # 8 x (4 x 16 + 4) = 544
        run = os.path.join(self.dir, "run")
        write_run(run, events, comps)
        out = self.plot(run)
        pages = -(-rows // PER_PAGE)
        names = ["pe_gantt.png"] + [f"pe_gantt_{n}.png" for n in range(2, pages + 1)]
        self.assertEqual(sorted(f for f in os.listdir(out) if f.startswith("pe_gantt")), sorted(names))
        for n, name in enumerate(names):
            page_rows = min(PER_PAGE, rows - n * PER_PAGE)
            w, h = png_size(os.path.join(out, name))
            self.assertEqual(w, 1400)
            self.assertGreaterEqual(h, page_rows * ROW_PX, name)
        w, h = png_size(os.path.join(out, "utilisation.png"))
        self.assertGreaterEqual(h, rows * ROW_PX)

    def test_overlapping_classes_are_each_charged_in_full(self):
        # A PE computes while its DMA streams: both are active for the whole phase. The old
        # "most downstream class wins" breakdown charged all of it to local GEMM and none to DMA.
        events = [span("gemm_qk", "local GEMM", "group0.cube0.pe0", "fanout", 0, 1000),
                  span("dma_kv", "KV DMA", "group0.cube0.pe0.dma", "fanout", 0, 1000),
                  span("dma_kv", "KV DMA", "group0.cube0.pe1.dma", "fanout", 0, 500),
                  span("merge", "reduction", "group0.cube0.reducer", "fanout", 900, 1000),
                  span("fanout", "other", "runtime.step", "fanout", 0, 1000)]
        run = os.path.join(self.dir, "run")
        write_run(run, events, ["group0.cube0.pe0"])
        out = self.plot(run)
        with open(os.path.join(out, "latency_breakdown.csv")) as f:
            rows = [line.strip().split(",") for line in f][1:]
        got = {r[2]: (float(r[4]), float(r[5])) for r in rows}
        self.assertEqual(got["local GEMM"], (1.0, 1.0))
        self.assertEqual(got["KV DMA"], (1.0, 0.75))  # active throughout; two DMAs busy 1000 + 500 of 2 x 1000
        self.assertEqual(got["reduction"], (0.1, 0.1))
        self.assertNotIn("other", got)  # the runtime's step envelope is no hardware activity
        self.assertEqual({r[1] for r in rows}, {"1000.000"})


if __name__ == "__main__":
    unittest.main()
