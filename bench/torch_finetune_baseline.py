"""The PyTorch baseline of bench_finetune: the fine-tuning simulator's step (FineTuneModel::step,
issue 20) written in PyTorch eager (Debian's python3-torch) from the exported training graph.

It interprets the forward ops of `<dir>/<name>-graph.json` (what `tinyscope export --mode faithful`
writes; the benchmark writes it for the model with the fine-tuning job's new classifier) with
torch ops, on float32 tensors holding the int8 / int32 values of `<name>-params.pkl` (read with
pickle + numpy):
  nn.mcuconv2d   conv(pad(x - z_x), w) + bias, x effective scale, straight-through round, + z_y
  nn.mcutruncate clamp to [min, max]
  nn.mcuadd      ((x1 - z1) s1 + (x2 - z2) s2) / s_y, straight-through round, + z_y
  mcumean        mean over H, W with a straight-through round
  reshape, cast, nn.log_softmax, nn.cross_entropy_with_logits (batch mean)
and trains the parameters listed in `<dir>/trainable.json` (the scheme's: biases, weights with
their updated input channels k) with plain SGD and tiny-training's QAS ("sgd_scale") computed here
from scale.json and the effective scales:
  bias   1 / (s_eff s_y)^2        weight  1 / (s_eff s_y / s_x)^2

Run as a careful user runs PyTorch: Tinyscope's malloc thresholds (mallopt at start-up), evaluation
under torch.inference_mode(); NCHW like the simulator.

usage: torch_finetune_baseline.py train|eval DIR NAME BATCH THREADS LR
DIR also holds input.f32 ([BATCH_EVAL, 3, R, R] int8 values as float32, R and BATCH_EVAL in
trainable.json) and labels.i64. `train` takes the first BATCH images; `eval` all of them.

Protocol (bench/PythonBaseline.h): prints "ready <loss>" (the first step's loss in train mode, the
mean logit in eval mode), then answers each line "N" with the mean seconds of N calls. In train
mode it also writes DIR/python-losses.txt: the losses of the first two steps (before and after one
update), which the benchmark compares with its own.
"""
import ctypes
import json
import pickle
import sys
import time

# The same malloc thresholds as Tinyscope (nn/TorchRuntime.cpp configureAllocator), before torch
# allocates anything: PyTorch as a careful user runs it (bench/torch_subnet_baseline.py "tuned").
_libc = ctypes.CDLL("libc.so.6")
_libc.mallopt(-3, 256 * 1024 * 1024)  # M_MMAP_THRESHOLD
_libc.mallopt(-1, 512 * 1024 * 1024)  # M_TRIM_THRESHOLD
_libc.mallopt(-2, 64 * 1024 * 1024)  # M_TOP_PAD

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def ste_round(r):
    return r + (torch.round(r) - r).detach()


class GraphModel:
    def __init__(self, folder, name):
        with open(f"{folder}/{name}-graph.json") as f:
            ops = json.load(f)
        with open(f"{folder}/{name}-params.pkl", "rb") as f:
            raw = pickle.load(f)
        with open(f"{folder}/scale.json") as f:
            self.scales = json.load(f)
        with open(f"{folder}/trainable.json") as f:
            self.meta = json.load(f)
        # Forward ops: up to the op whose output is the forward output (the loss).
        self.ops = []
        for op in ops:
            self.ops.append(op)
            if any((o.get("meta") or {}).get("output_info") == "fwd@output" for o in op["outputs"]):
                break
        self.values = {k: torch.from_numpy(np.asarray(v).astype(np.float32)) for k, v in raw.items()}
        for op in self.ops:
            for i in op["inputs"]:
                if i["var_type"] == "constant":
                    self.values[i["name"]] = torch.tensor(np.asarray(i["meta"]["data"], dtype=np.float32))
        self.trainable = []
        for p in self.meta["trainable"]:
            name = p["name"]
            prefix = name[: name.rfind("_")]
            eff = self.values[prefix + "_scale"]
            sy = np.float32(self.scales[prefix + "_y_scale"])
            t = self.values[name].clone().requires_grad_(True)
            self.values[name] = t
            if p["bias"]:
                q = eff * sy
                qas = 1.0 / (q * q)
                mask = None
            else:
                sx = np.float32(self.scales[prefix + "_x_scale"])
                w = eff * sy / sx
                qas = (1.0 / (w * w)).reshape(-1, 1, 1, 1)
                mask = None
                if p["k"] < p["full"]:
                    shape = [1, 1, 1, 1]
                    shape[p["dim"]] = p["full"]
                    mask = torch.zeros(shape)
                    mask.narrow(p["dim"], 0, p["k"]).fill_(1.0)
            self.trainable.append((t, qas, mask))

    def forward(self, x, label):
        """Returns (loss, logits)."""
        v = self.values
        act = {}
        n = x.shape[0]
        logits = None

        def get(i):
            nm = i["name"]
            if nm == "input":
                return x
            if nm == "label":
                return label
            if i["var_type"] == "activation":
                return act[nm]
            return v[nm]

        for op in self.ops:
            ins = [get(i) for i in op["inputs"]]
            t = op["type"]
            a = op["attrs"]
            if t == "nn.mcuconv2d":
                x0, w, b, zx, zy, s = ins
                pt, pl, pb, pr = a["padding"]
                z = F.conv2d(F.pad(x0 - zx, (pl, pr, pt, pb)), w, None, tuple(a["strides"]), 0, 1, a["groups"])
                z = z + b.reshape(1, -1, 1, 1)
                y = ste_round(z * s.reshape(1, -1, 1, 1)) + zy
            elif t == "nn.mcutruncate":
                y = torch.clamp(ins[0], a["min"], a["max"])
            elif t == "nn.mcuadd":
                x1, x2, z1, z2, s1, s2, zy, sy = ins
                y = ste_round(((x1 - z1) * s1 + (x2 - z2) * s2) / sy) + zy
            elif t == "mcumean":
                h, w_ = ins[0].shape[2], ins[0].shape[3]
                y = ste_round(ins[0].sum((2, 3), keepdim=True) / float(h * w_))
            elif t == "reshape":
                shape = list(op["outputs"][0]["shape"])
                shape[0] = n
                y = ins[0].reshape(shape)
            elif t == "cast":
                y = ins[0]
                logits = y
            elif t == "nn.log_softmax":
                y = torch.log_softmax(ins[0], -1)
            elif t == "nn.cross_entropy_with_logits":
                y = -(ins[0] * ins[1]).sum() / float(n)
            else:
                raise SystemExit(f"no rule for {t}")
            act[op["outputs"][0]["name"]] = y
        return y, logits

    def step(self, x, label, lr):
        for t, _, _ in self.trainable:
            t.grad = None
        loss, _ = self.forward(x, label)
        loss.backward()
        with torch.no_grad():
            for t, qas, mask in self.trainable:
                g = t.grad
                if g is None:
                    continue
                if mask is not None:
                    g = g * mask
                g = g * qas
                t.sub_(g, alpha=lr)
        return loss.item()

    def logits(self, x):
        with torch.inference_mode():
            label = torch.zeros(x.shape[0], self.meta["classes"])
            return self.forward(x, label)[1]


def main():
    mode, folder, name, batch, threads, lr = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    torch.set_num_threads(threads)
    m = GraphModel(folder, name)
    res, total = m.meta["resolution"], m.meta["eval_batch"]
    images = torch.from_numpy(np.fromfile(f"{folder}/input.f32", dtype=np.float32).reshape(total, 3, res, res))
    labels = torch.from_numpy(np.fromfile(f"{folder}/labels.i64", dtype=np.int64))
    if mode == "train":
        x = images[:batch].contiguous()
        onehot = F.one_hot(labels[:batch], m.meta["classes"]).to(torch.float32)
        l0 = m.step(x, onehot, lr)
        l1 = m.step(x, onehot, lr)
        with open(f"{folder}/python-losses.txt", "w") as f:
            f.write(f"{l0!r} {l1!r}\n")
        call = lambda: m.step(x, onehot, lr)
        first = l0
    else:
        x = images
        first = float(m.logits(x).mean())
        call = lambda: m.logits(x)
    print(f"ready {first!r}", flush=True)
    for line in sys.stdin:
        n = max(1, int(line))
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        print(f"{(time.perf_counter() - t0) / n!r}", flush=True)


if __name__ == "__main__":
    main()
