"""The PyTorch baseline of bench_prune_scan: Lab 1's sensitivity scan (MIT 6.5940) as the lab runs
it, in PyTorch 1.13 eager (Debian's python3-torch), on one extracted subnet.

The model is an nn.Module built from the subnet's state dict (what Subnet::save writes, after the
benchmark's BatchNorm re-calibration, so it starts from the weights our job scans) and the JSON list
of its blocks (bench/SubnetForPython.h): Conv2d + BatchNorm2d (eps 1e-3) modules under the state
dict's own key names, loaded with load_state_dict(strict=True), the forward of
bench/torch_subnet_baseline.py ("plain": NCHW, BN separate). So model.named_parameters() names the
layers as our scan does.

The scan is the lab's loop:
  model.eval(); under torch.no_grad():
  for every (name, param) of model.named_parameters() with param.dim() > 1:
      clone = param.detach().clone()
      for every sparsity: fine_grained_prune(param.detach(), sparsity); top-1 on the images
      param.copy_(clone)
with the lab's fine_grained_prune (sparsity clamped to [0, 1]; num_zeros = round(numel * sparsity);
importance = |w|; threshold = importance.view(-1).kthvalue(num_zeros).values; mask = importance >
threshold; param.mul_(mask)) and its evaluate (torch.inference_mode(), argmax of the logits
against the labels, batch after batch). As in the lab the sparsities of one layer are applied one
after the other to the same tensor, restored after the layer: for rising sparsities that prunes
exactly what pruning the original at each sparsity prunes (the zeros are the smallest importances,
the survivors keep their order), which is what our scan does.

Inputs, written by the benchmark so that preprocessing cannot differ: DIR/images.f32 (N x 3 x R x R
float32, the images our evaluator feeds its engine), DIR/labels.i64 (N int64), DIR/scan.json
({"sparsities": [...], "batch": B, "resolution": R}).

Like the other baselines it runs with Tinyscope's malloc thresholds (mallopt at start-up, as
bench/torch_finetune_baseline.py) on THREADS threads (torch.set_num_threads).

Protocol (bench/PythonBaseline.h): prints "ready <correct>" (the dense model's correct images),
then for each line on stdin runs the whole scan once, writes DIR/python-scan.json ({"layers":
[{"name", "correct": [per sparsity]}]}) and prints the scan's seconds (the loop alone).

usage: lab_sensitivity_scan.py CKPT META.json DIR THREADS
"""
import ctypes
import json
import sys
import time

_libc = ctypes.CDLL("libc.so.6")
_libc.mallopt(-3, 256 * 1024 * 1024)  # M_MMAP_THRESHOLD
_libc.mallopt(-1, 512 * 1024 * 1024)  # M_TRIM_THRESHOLD
_libc.mallopt(-2, 64 * 1024 * 1024)  # M_TOP_PAD

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

EPS = 1e-3


class ConvBn(nn.Module):
    """`<prefix>.conv.weight` and `<prefix>.bn.*`, the key names of the subnet's state dict."""

    def __init__(self, weight_shape, stride=1, depthwise=False):
        super().__init__()
        cout, cin_per_group, k, _ = weight_shape
        groups = cout if depthwise else 1
        self.conv = nn.Conv2d(cin_per_group * groups, cout, k, stride, k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=EPS)

    def forward(self, x):
        return self.bn(self.conv(x))


class SqueezeExcite(nn.Module):
    def __init__(self, reduce_shape, expand_shape):
        super().__init__()
        self.fc = nn.Module()
        self.fc.reduce = nn.Conv2d(reduce_shape[1], reduce_shape[0], 1, bias=True)
        self.fc.expand = nn.Conv2d(expand_shape[1], expand_shape[0], 1, bias=True)

    def forward(self, y):
        s = y.mean((2, 3), keepdim=True)
        s = F.relu6(self.fc.reduce(s))
        s = self.fc.expand(s)
        return y * (F.relu6(s + 3) / 6)


class DepthConv(ConvBn):
    def __init__(self, sd, prefix, stride, se):
        super().__init__(sd[prefix + "conv.weight"].shape, stride, True)
        if se:
            self.se = SqueezeExcite(sd[prefix + "se.fc.reduce.weight"].shape, sd[prefix + "se.fc.expand.weight"].shape)

    def forward(self, x):
        y = F.relu6(self.bn(self.conv(x)))
        return self.se(y) if hasattr(self, "se") else y


class MobileInvertedConv(nn.Module):
    def __init__(self, sd, prefix, block):
        super().__init__()
        self.fused = block["fused"]
        if not self.fused:
            self.inverted_bottleneck = ConvBn(sd[prefix + "inverted_bottleneck.conv.weight"].shape)
            self.depth_conv = DepthConv(sd, prefix + "depth_conv.", block["stride"], block["se"])
        self.point_linear = ConvBn(sd[prefix + "point_linear.conv.weight"].shape)

    def forward(self, x):
        if not self.fused:
            x = self.depth_conv(F.relu6(self.inverted_bottleneck(x)))
        return self.point_linear(x)


class Block(nn.Module):
    def __init__(self, sd, block):
        super().__init__()
        self.residual = block["residual"] and not block["fused"]
        self.mobile_inverted_conv = MobileInvertedConv(sd, "blocks.%d.mobile_inverted_conv." % block["index"], block)

    def forward(self, x):
        y = self.mobile_inverted_conv(x)
        return y + x if self.residual else y


class Subnet(nn.Module):
    def __init__(self, sd, blocks):
        super().__init__()
        self.first_conv = ConvBn(sd["first_conv.conv.weight"].shape, 2)
        self.blocks = nn.ModuleDict({str(b["index"]): Block(sd, b) for b in blocks})
        self.feature_mix_layer = ConvBn(sd["feature_mix_layer.conv.weight"].shape)
        self.classifier = nn.Module()
        w = sd["classifier.linear.weight"]
        self.classifier.linear = nn.Linear(w.shape[1], w.shape[0])

    def forward(self, x):
        x = F.relu6(self.first_conv(x))
        for b in self.blocks.values():
            x = b(x)
        x = F.relu6(self.feature_mix_layer(x))
        return self.classifier.linear(x.mean((2, 3)))


def fine_grained_prune(tensor, sparsity):
    """Lab 1's magnitude pruning of one tensor, in place; returns the mask."""
    sparsity = min(max(0.0, sparsity), 1.0)
    if sparsity == 1.0:
        tensor.zero_()
        return torch.zeros_like(tensor)
    if sparsity == 0.0:
        return torch.ones_like(tensor)
    num_zeros = round(tensor.numel() * sparsity)
    importance = tensor.abs()
    threshold = importance.view(-1).kthvalue(num_zeros).values
    mask = torch.gt(importance, threshold)
    tensor.mul_(mask)
    return mask


@torch.inference_mode()
def evaluate(model, batches):
    """The lab's evaluate: correct images (the top-1 percent is correct / images * 100)."""
    model.eval()
    correct = 0
    for inputs, targets in batches:
        outputs = model(inputs).argmax(dim=1)
        correct += int((outputs == targets).sum())
    return correct


@torch.no_grad()
def sensitivity_scan(model, batches, sparsities):
    layers = []
    named_weights = [(name, param) for name, param in model.named_parameters() if param.dim() > 1]
    for name, param in named_weights:
        param_clone = param.detach().clone()
        correct = []
        for sparsity in sparsities:
            fine_grained_prune(param.detach(), sparsity=sparsity)
            correct.append(evaluate(model, batches))
        param.copy_(param_clone)
        layers.append({"name": name, "correct": correct})
    return layers


def main():
    ckpt, meta_path, folder = sys.argv[1:4]
    threads = int(sys.argv[4])
    torch.set_num_threads(threads)
    sd = torch.load(ckpt)["state_dict"]
    with open(meta_path) as f:
        blocks = json.load(f)["blocks"]
    with open(folder + "/scan.json") as f:
        spec = json.load(f)
    model = Subnet(sd, blocks)
    model.load_state_dict(sd, strict=True)
    model.eval()

    r = spec["resolution"]
    images = torch.from_numpy(np.fromfile(folder + "/images.f32", dtype=np.float32)).view(-1, 3, r, r)
    labels = torch.from_numpy(np.fromfile(folder + "/labels.i64", dtype=np.int64))
    bs = spec["batch"]
    batches = [(images[i:i + bs], labels[i:i + bs]) for i in range(0, labels.numel(), bs)]

    print("ready", evaluate(model, batches), flush=True)
    for _ in sys.stdin:
        t = time.perf_counter()
        layers = sensitivity_scan(model, batches, spec["sparsities"])
        seconds = time.perf_counter() - t
        with open(folder + "/python-scan.json", "w") as f:
            json.dump({"layers": layers}, f)
        print(seconds, flush=True)


main()
