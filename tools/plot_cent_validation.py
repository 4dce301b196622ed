#!/usr/bin/python3
"""Reference vs simulated CENT transformer-block latency over KV length, one panel per pipeline split.

Usage: tools/plot_cent_validation.py RESULT.csv OUT.png
RESULT.csv is the output of `ahbm-sim validate cent ROWS.csv --out RESULT.csv` (docs/validation.md).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PARTS = (("TransformerBlock latency", "ahbm_block_ms", "block", "black"),
         ("PIM latency", "ahbm_pim_ms", "PIM", "tab:blue"),
         ("Acc latency", "ahbm_acc_ms", "accelerator", "tab:green"),
         ("CXL latency", "ahbm_cxl_ms", "CXL", "tab:red"))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    splits = sorted({(int(r["Pipeline parallelism"]), int(r["Channels per block"])) for r in rows})
    fig, axes = plt.subplots(1, len(splits), figsize=(5.5 * len(splits), 4), squeeze=False)
    for ax, (pp, ch) in zip(axes[0], splits):
        sel = sorted((r for r in rows if int(r["Pipeline parallelism"]) == pp and int(r["Channels per block"]) == ch),
                     key=lambda r: int(r["Sequence length"]))
        L = [int(r["Sequence length"]) for r in sel]
        for ref, sim, name, colour in PARTS:
            ax.plot(L, [float(r[ref]) * 1e3 for r in sel], "o", color=colour, mfc="none", ms=4,
                    label=f"CENT artifact, {name}")
            ax.plot(L, [float(r[sim]) * 1e3 for r in sel], "-", color=colour, label=f"ahbm-sim, {name}")
        ax.set_title(f"{sel[0]['Model']}, PP {pp} x TP 1, {ch} channels per block")
        ax.set_xlabel("KV length (tokens)")
        ax.set_ylabel("latency per block (µs)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
