"""PyTorch baseline for bench_inference and bench_train_step: one extracted subnet (the state dict
Subnet::save writes, plus a JSON list of its blocks) run by PyTorch 1.13 eager (Debian's
python3-torch) in one of two configurations, on the caller's thread count:

  plain  PyTorch as it runs by default: NCHW, a separate batch norm after every conv, glibc's
         default allocator, torch.no_grad() for inference.
  tuned  PyTorch as a careful user runs it: the same malloc thresholds as Tinyscope (mallopt at
         start-up, nn/TorchRuntime.cpp), channels-last weights and activations, and for inference
         every BN fused into its conv (torch.nn.utils.fusion.fuse_conv_bn_weights, what
         fuse_conv_bn_eval does) under torch.inference_mode().

Training (mode train) is forward + backward of the static subnet with BN in training mode and
cross-entropy, as bench_train_step times ours; inputs are torch.randn / torch.randint from CPU
generators seeded 0 and 1, the numbers the C++ side draws with the same seeds.

It serves timing requests so the caller can interleave its own runs with these: it prints
"ready CHECKSUM" (the logits' sum, or the first step's loss), then for every line "REPS" on stdin
runs REPS calls and prints the mean seconds per call.

usage: torch_subnet_baseline.py infer|train plain|tuned CKPT META.json RES BATCH THREADS
"""
import ctypes
import json
import sys
import time

mode, variant, ckpt, meta_path = sys.argv[1:5]
res, batch, threads = (int(v) for v in sys.argv[5:8])
if variant == "tuned":
    libc = ctypes.CDLL("libc.so.6")
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
    libc.mallopt(M_MMAP_THRESHOLD, 256 * 1024 * 1024)
    libc.mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024)
    libc.mallopt(M_TOP_PAD, 64 * 1024 * 1024)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.utils.fusion import fuse_conv_bn_weights  # noqa: E402

torch.set_num_threads(threads)
sd = torch.load(ckpt)["state_dict"]
blocks = json.load(open(meta_path))["blocks"]
EPS = 1e-3
train = mode == "train"
layout = torch.channels_last if variant == "tuned" else torch.contiguous_format
fold = variant == "tuned" and not train


def conv_names():
    yield "first_conv."
    for b in blocks:
        p = "blocks.%d.mobile_inverted_conv." % b["index"]
        if not b["fused"]:
            yield p + "inverted_bottleneck."
            yield p + "depth_conv."
        yield p + "point_linear."
    yield "feature_mix_layer."


# Per conv: weight, bias (folded) or the BN tensors.
params = {}
for p in conv_names():
    w = sd[p + "conv.weight"]
    if fold:
        w, b = fuse_conv_bn_weights(w, None, sd[p + "bn.running_mean"], sd[p + "bn.running_var"], EPS,
                                    sd[p + "bn.weight"], sd[p + "bn.bias"])
        params[p] = (w.detach().to(memory_format=layout), b.detach())
    else:
        params[p] = (w.to(memory_format=layout), sd[p + "bn.weight"], sd[p + "bn.bias"],
                     sd[p + "bn.running_mean"].clone(), sd[p + "bn.running_var"].clone())
se = {k: v.to(memory_format=layout) if v.dim() == 4 else v for k, v in sd.items() if ".se." in k}
fc_w, fc_b = sd["classifier.linear.weight"], sd["classifier.linear.bias"]
leaves = [t for v in params.values() for t in v[:1 if fold else 3]] + list(se.values()) + [fc_w, fc_b]
if train:
    for t in leaves:
        t.requires_grad_(True)


def conv_bn(x, p, stride=1, depthwise=False):
    w = params[p][0]
    groups = x.shape[1] if depthwise else 1
    if fold:
        return F.conv2d(x, w, params[p][1], stride, w.shape[-1] // 2, 1, groups)
    _, g, b, rm, rv = params[p]
    return F.batch_norm(F.conv2d(x, w, None, stride, w.shape[-1] // 2, 1, groups), rm, rv, g, b, train, 0.1, EPS)


def forward(x):
    x = F.hardtanh(conv_bn(x, "first_conv.", 2), 0, 6)
    for b in blocks:
        p = "blocks.%d.mobile_inverted_conv." % b["index"]
        if b["fused"]:
            x = conv_bn(x, p + "point_linear.")
            continue
        y = F.hardtanh(conv_bn(x, p + "inverted_bottleneck."), 0, 6)
        y = F.hardtanh(conv_bn(y, p + "depth_conv.", b["stride"], True), 0, 6)
        if b["se"]:
            s = y.mean((2, 3), keepdim=True)
            q = p + "depth_conv.se.fc."
            s = F.hardtanh(F.conv2d(s, se[q + "reduce.weight"], se[q + "reduce.bias"]), 0, 6)
            s = F.conv2d(s, se[q + "expand.weight"], se[q + "expand.bias"])
            y = y * (F.hardtanh(s + 3, 0, 6) / 6)
        y = conv_bn(y, p + "point_linear.")
        x = y + x if b["residual"] else y
    x = F.hardtanh(conv_bn(x, "feature_mix_layer."), 0, 6)
    return F.linear(x.mean((2, 3)), fc_w, fc_b)


x = torch.randn(batch, 3, res, res, generator=torch.Generator().manual_seed(0)).contiguous(memory_format=layout)
y = torch.randint(0, fc_w.shape[0], (batch,), generator=torch.Generator().manual_seed(1))


def step():
    loss = F.cross_entropy(forward(x), y)
    loss.backward()
    for t in leaves:
        t.grad = None
    return loss


if train:
    call, check = step, lambda: float(step())
else:
    guard = torch.inference_mode if variant == "tuned" else torch.no_grad

    def call():
        with guard():
            return forward(x)

    def check():
        return float(call().double().sum())

print("ready", check(), flush=True)
for line in sys.stdin:
    reps = int(line)
    t = time.perf_counter()
    for _ in range(reps):
        call()
    print((time.perf_counter() - t) / reps, flush=True)
