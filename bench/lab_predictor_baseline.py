"""Baseline for bench/bench_predictor.cpp: the lab's accuracy-predictor recipe (MIT 6.5940 Lab 3:
MLP 128-400-400-400-1 with a fixed base accuracy, L1 loss, Adam 1e-3, batch 256, 10 epochs) in
PyTorch eager with autograd, written from that description (not the lab's code), on the split
Tinyscope uses (random.seed(SEED); random.shuffle; last fifth held out; SEED also seeds torch). Also a linear least-squares
fit on the same split. Prints one JSON line.

usage: lab_predictor_baseline.py DATASET_DIR THREADS [EPOCHS [SEED]]
"""
import glob
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch

RES = [96, 112, 128, 144, 160]
KS = [3, 5, 7]
EX = [3, 4, 6]
BASE = [1, 2, 2, 2, 2, 1]
START = [0, 3, 7, 11, 15, 19]


def encode(c):
    f = np.zeros(128, np.float32)
    f[RES.index(c["image_size"])] = 1
    f[5 + c["wid"]] = 1
    for s in range(6):
        for j in range(BASE[s] + (c["d"][s] if s < 5 else 0)):
            i = START[s] + j
            f[8 + 3 * i + KS.index(c["ks"][i])] = 1
            f[68 + 3 * i + EX.index(c["e"][i])] = 1
    return f


def tau_b(x, y):
    """Kendall's tau-b, O(n log n) (Knight): pairs tied in x or y count as scipy counts them."""
    n = len(x)
    order = sorted(range(n), key=lambda i: (x[i], y[i]))
    xs = [x[i] for i in order]
    ys = [y[i] for i in order]

    def tied(v):
        t, run = 0, 1
        for i in range(1, len(v) + 1):
            if i < len(v) and v[i] == v[i - 1]:
                run += 1
            else:
                t += run * (run - 1) // 2
                run = 1
        return t
    n1 = tied(xs)
    n3, run = 0, 1
    for i in range(1, n + 1):
        if i < n and xs[i] == xs[i - 1] and ys[i] == ys[i - 1]:
            run += 1
        else:
            n3 += run * (run - 1) // 2
            run = 1
    swaps = 0
    width = 1
    v = ys[:]
    while width < n:
        out = []
        for lo in range(0, n, 2 * width):
            a, b = v[lo:lo + width], v[lo + width:lo + 2 * width]
            i = j = 0
            while i < len(a) and j < len(b):
                if b[j] < a[i]:
                    swaps += len(a) - i
                    out.append(b[j])
                    j += 1
                else:
                    out.append(a[i])
                    i += 1
            out += a[i:] + b[j:]
        v = out
        width *= 2
    n2 = tied(v)
    n0 = n * (n - 1) // 2
    return (n0 - n1 - n2 + n3 - 2 * swaps) / math.sqrt((n0 - n1) * (n0 - n2))


def main():
    folder, threads = sys.argv[1], int(sys.argv[2])
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    torch.set_num_threads(threads)
    configs, labels = [], []
    for path in sorted(glob.glob(os.path.join(folder, "src", "*acc_table.json"))):
        for c, acc in json.load(open(path)):
            configs.append(c)
            labels.append(acc)
    X = torch.tensor(np.array([encode(c) for c in configs]))
    Y = torch.tensor([a / 100 for a in labels], dtype=torch.float32)
    base = float(np.mean(np.array(labels, np.float64) / 100))
    idx = list(range(len(configs)))
    random.seed(seed)
    random.shuffle(idx)
    n_val = round(len(idx) * 0.2)
    tr, va = torch.tensor(idx[:-n_val]), torch.tensor(idx[-n_val:])
    Xt, Yt, Xv = X[tr], Y[tr], X[va]
    measured = [labels[i] for i in idx[-n_val:]]

    torch.manual_seed(seed)
    layers = []
    for i in range(3):
        layers += [torch.nn.Linear(128 if i == 0 else 400, 400), torch.nn.ReLU(inplace=True)]
    layers.append(torch.nn.Linear(400, 1, bias=False))
    mlp = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(mlp.parameters())
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xt, Yt), batch_size=256, shuffle=True)
    t = time.perf_counter()
    for _ in range(epochs):
        mlp.train()
        for data, label in loader:
            pred = mlp(data).squeeze(1) + base
            loss = torch.nn.functional.l1_loss(pred, label)
            opt.zero_grad()
            loss.backward()
            opt.step()
    seconds = time.perf_counter() - t
    with torch.no_grad():
        p32 = mlp(Xv).squeeze(1) + base
        pv = (p32 * 100).double().tolist()
    err = [p - m for p, m in zip(pv, measured)]
    mae = sum(abs(e) for e in err) / len(err)
    rmse = math.sqrt(sum(e * e for e in err) / len(err))

    # Linear least squares on the one-hot features (float64).
    A = np.hstack([X[tr].numpy().astype(np.float64), np.ones((len(tr), 1))])
    w, *_ = np.linalg.lstsq(A, np.array(labels, np.float64)[tr.numpy()], rcond=None)
    lin = np.hstack([X[va].numpy().astype(np.float64), np.ones((len(va), 1))]) @ w
    lin_mae = float(np.mean(np.abs(lin - np.array(measured))))
    print(json.dumps({"seconds": seconds, "threads": threads, "epochs": epochs, "mae": mae, "rmse": rmse,
                      "kendall_tau": tau_b(pv, measured),
                      # τ-b as a float32 pipeline sees it: predictions and labels as float32 fractions
                      # (labels that differ in the 8th digit become ties).
                      "kendall_tau_float32": tau_b(p32.tolist(), Y[va].tolist()), "linear_mae": lin_mae, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
