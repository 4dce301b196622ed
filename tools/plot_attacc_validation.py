#!/usr/bin/python3
"""Reference vs simulated AttAcc attention time over KV length, one panel per PIM level.

Usage: tools/plot_attacc_validation.py RESULT.csv OUT.png
RESULT.csv is the output of `ahbm-sim validate attacc POINTS.csv --out RESULT.csv` (docs/validation.md).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    levels = sorted({r["pim_type"] for r in rows}, key=["BG", "BANK", "BUFFER"].index)
    fig, axes = plt.subplots(1, len(levels), figsize=(5 * len(levels), 4), squeeze=False)
    for ax, level in zip(axes[0], levels):
        for pc, colour in (("True", "tab:red"), ("False", "tab:blue")):
            pts = sorted((int(r["L"]), float(r["ref_ns"]) / 1e3, float(r["ahbm_ns"]) / 1e3)
                         for r in rows if r["pim_type"] == level and r["power_constraint"] == pc)
            if not pts:
                continue
            name = "power-constrained" if pc == "True" else "unconstrained"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=colour, mfc="none",
                    label=f"AttAcc artifact, {name}")
            ax.plot([p[0] for p in pts], [p[2] for p in pts], "-", color=colour, label=f"ahbm-sim, {name}")
        ax.set_title(f"{level} level, 188 (request, head) pairs per stack")
        ax.set_xlabel("KV length L (tokens)")
        ax.set_ylabel("attention time per decode step (µs)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
