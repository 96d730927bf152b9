#!/usr/bin/python3
"""The sensitivity curves of docs/COMPRESSION.md from `tinyscope prune --sensitivity --json` output:
one panel per layer (top-1 against that layer's sparsity, the dense top-1 dashed, the lab's
lower bound 100 - 1.5 x (100 - dense) dotted), as the lab's plot_sensitivity_scan draws them, and
the parameters per layer as bars underneath. Debian's python3-matplotlib (./setup.sh installs it).

usage: plot_sensitivity.py SCAN.json OUT.png"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def short(name):
    n = name.replace(".weight", "").replace(".mobile_inverted_conv", "")
    for a, b in (("blocks.", "b"), (".inverted_bottleneck.conv", " pw1"), (".depth_conv.se.fc.reduce", " se-r"),
                 (".depth_conv.se.fc.expand", " se-e"), (".depth_conv.conv", " dw"), (".point_linear.conv", " pw2"),
                 ("first_conv.conv", "stem"), ("feature_mix_layer.conv", "mix"), ("classifier.linear", "fc")):
        n = n.replace(a, b)
    return n


scan = json.load(open(sys.argv[1]))
curves, dense = scan["sensitivity"], scan["dense_top1"]
cols = 8
rows = math.ceil(len(curves) / cols)
fig = plt.figure(figsize=(2.0 * cols, 1.55 * rows + 2.4))
grid = fig.add_gridspec(rows + 1, cols, height_ratios=[1] * rows + [1.4])
bound = 100 - (100 - dense) * 1.5
for i, c in enumerate(curves):
    ax = fig.add_subplot(grid[i // cols, i % cols])
    ax.plot(c["sparsity"], c["top1"], "o-", ms=3, lw=1.2, color="tab:blue")
    ax.axhline(dense, ls="--", lw=0.8, color="grey")
    ax.axhline(bound, ls=":", lw=0.8, color="tab:red")
    ax.set_ylim(0, 100)
    ax.set_title("%s (%d)" % (short(c["layer"]), c["params"]), fontsize=7)
    ax.tick_params(labelsize=6)
    if i % cols:
        ax.set_yticklabels([])
bars = fig.add_subplot(grid[rows, :])
bars.bar(range(len(curves)), [c["params"] for c in curves], color="tab:blue")
bars.set_xticks(range(len(curves)))
bars.set_xticklabels([short(c["layer"]) for c in curves], rotation=90, fontsize=6)
bars.set_ylabel("parameters", fontsize=7)
bars.tick_params(axis="y", labelsize=6)
fig.suptitle("Sensitivity scan: top-1 %% with one layer pruned (dense %.2f %%, %d images)" % (dense, scan["images"]), fontsize=9)
fig.tight_layout(rect=(0, 0, 1, 0.985))
fig.savefig(sys.argv[2], dpi=110)
