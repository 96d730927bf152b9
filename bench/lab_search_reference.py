"""The lab's random and evolutionary search, written from its documented semantics (MIT 6.5940
Lab 3 EvolutionSearcher / RandomSearcher as described in docs/SEARCH.md and MCUNET_SPACE.md §6),
with the closed-form MCUNet-VWW cost model. It is the baseline of bench/bench_search.cpp and the
draw-for-draw reference of tests/test_search.cpp; it is not the lab's code.

usage: lab_search_reference.py JSON_REQUEST      (prints one JSON line)
request: {"algorithm": "evolution"|"random", "population_size", "max_time_budget", "parent_ratio",
          "mutation_ratio", "arch_mutate_prob", "resolution_mutate_prob", "seed",
          "constraints": {"millionMACs": .., "KBPeakMemory": ..},
          "oracle": "toy" | path of a Tinyscope predictor .bin (with its .json card)}
"""
import json
import random
import sys
import time

import numpy as np

RES = [96, 112, 128, 144, 160]
KS = [3, 5, 7]
EX = [3, 4, 6]
DEPTHS = [0, 1, 2]
WIDS = [0, 1, 2]
W = [(16, 8, [16, 24, 40, 48, 96, 160]), (24, 16, [24, 32, 64, 72, 144, 240]), (32, 16, [24, 40, 80, 96, 192, 320])]
BASE = [1, 2, 2, 2, 2, 1]
STRIDE = [2, 2, 2, 1, 2, 1]
START = [0, 3, 7, 11, 15, 19]
SE = [[0] * 3, [0, 1, 1, 1], [1] * 4, [1] * 4, [1] * 4, [0]]


def depth(c, s):
    return BASE[s] if s == 5 else BASE[s] + c["d"][s]


def cost(c):
    """MACs (thop convention with 4 per BN element), params, peak activation bytes."""
    f, b0, st = W[c["wid"]]
    R = c["image_size"]
    h = (R - 1) // 2 + 1
    macs = h * h * f * 27 + 4 * f * h * h + h * h * b0 * f + 4 * b0 * h * h
    params = f * 27 + 2 * f + b0 * f + 2 * b0
    peak = max(3 * R * R + f * h * h, (f + b0) * h * h)
    cin = b0
    for s in range(6):
        for j in range(depth(c, s)):
            i = START[s] + j
            k, e = c["ks"][i], c["e"][i]
            mid, cout = cin * e, st[s]
            stride = STRIDE[s] if j == 0 else 1
            ho = (h - 1) // stride + 1
            macs += h * h * mid * cin + 4 * mid * h * h + ho * ho * mid * k * k + 4 * mid * ho * ho + ho * ho * cout * mid + 4 * cout * ho * ho
            params += mid * cin + 2 * mid + mid * k * k + 2 * mid + cout * mid + 2 * cout
            if SE[s][j]:
                r = cin // 4
                macs += 2 * mid * r
                params += 2 * mid * r + r + mid
            if j > 0:
                peak = max(peak, (cin + mid) * h * h, 2 * mid * h * h + cin * h * h, (mid + cout) * h * h)
            else:
                peak = max(peak, (cin + mid) * h * h, mid * (h * h + ho * ho), (mid + cout) * ho * ho)
            cin, h = cout, ho
    macs += h * h * 384 * cin + 4 * 384 * h * h + 384 * 2
    params += 384 * cin + 768 + 770
    peak = max(peak, (cin + 384) * h * h, 386)
    return macs, params, peak


def efficiency(c):
    macs, params, peak = cost(c)
    return {"millionMACs": macs / 1e6, "KBPeakMemory": peak / 1024}


def satisfy(eff, constraint):
    return all(eff[k] <= v for k, v in constraint.items())


def one_hot(c):
    idx = [RES.index(c["image_size"]), 5 + c["wid"]]
    for s in range(6):
        for j in range(depth(c, s)):
            i = START[s] + j
            idx.append(8 + 3 * i + KS.index(c["ks"][i]))
            idx.append(68 + 3 * i + EX.index(c["e"][i]))
    return sorted(idx)


def random_sample_arch():
    return {"ks": random.choices(KS, k=20), "e": random.choices(EX, k=20), "d": random.choices(DEPTHS, k=6),
            "image_size": random.choice(RES), "wid": random.choice(WIDS)}


def mutate(c, res_p, arch_p):
    c = {k: (list(v) if isinstance(v, list) else v) for k, v in c.items()}
    if random.random() < res_p:
        c["image_size"] = random.choice(RES)
    if random.random() < arch_p:   # the lab mutates the width with the arch probability
        c["wid"] = random.choice(WIDS)
    for i in range(20):
        if random.random() < arch_p:
            c["ks"][i] = random.choice(KS)
            c["e"][i] = random.choice(EX)
    for s in range(6):
        if random.random() < arch_p:
            c["d"][s] = random.choice(DEPTHS)
    return c


def crossover(a, b):
    c = {}
    for k in a.keys():
        if isinstance(a[k], list):
            c[k] = [random.choice([a[k][i], b[k][i]]) for i in range(len(a[k]))]
        else:
            c[k] = random.choice([a[k], b[k]])
    return c


def toy_oracle(configs):
    """A deterministic stand-in for accuracy, summed in the same order as Tinyscope's test oracle."""
    out = []
    for c in configs:
        acc = 80.0
        for i in one_hot(c):
            acc += ((i * 7919) % 101) / 50.0
        out.append(acc)
    return out


def mlp_oracle(path):
    card = json.load(open(path[:-4] + ".json"))
    raw = open(path, "rb").read()
    members, ndims = np.frombuffer(raw[8:16], np.uint32)
    dims = np.frombuffer(raw[16:16 + 4 * ndims], np.uint32)
    flat = np.frombuffer(raw[16 + 4 * ndims:], np.float32)
    layers, off = [], 0
    for l in range(ndims - 1):
        o, i = int(dims[l + 1]), int(dims[l])
        w = flat[off:off + o * i].reshape(o, i).T.copy()
        off += o * i
        b = None
        if l < ndims - 2:
            b = flat[off:off + o].copy()
            off += o
        layers.append((w, b))
    base = card["base_accuracy"]
    try:
        import torch
        torch.set_num_threads(1)
        tl = [(torch.from_numpy(w), None if b is None else torch.from_numpy(b)) for w, b in layers]

        def run(x):
            h = torch.from_numpy(x)
            for w, b in tl:
                h = h @ w
                if b is not None:
                    h = torch.relu(h + b)
            return h[:, 0].numpy()
        kind = "torch"
    except ImportError:
        def run(x):
            h = x
            for w, b in layers:
                h = h @ w
                if b is not None:
                    h = np.maximum(h + b, 0)
            return h[:, 0]
        kind = "numpy"

    def predict(configs):
        x = np.zeros((len(configs), int(dims[0])), np.float32)
        for r, c in enumerate(configs):
            x[r, one_hot(c)] = 1
        return [(float(v) + base) * 100 for v in run(x)]
    return predict, kind


def evolution(req, predict):
    P = req["population_size"]
    mutation_numbers = int(round(req["mutation_ratio"] * P))
    parents_size = int(round(req["parent_ratio"] * P))
    constraint = req["constraints"]

    def valid(make):
        while True:
            c = make()
            if satisfy(efficiency(c), constraint):
                return c
    children = [valid(random_sample_arch) for _ in range(P)]
    population = list(zip(predict(children), children))
    history = [max(a for a, _ in population)]
    for _ in range(req["max_time_budget"]):
        population = sorted(population, key=lambda x: x[0], reverse=True)[:parents_size]
        children = []
        for _ in range(mutation_numbers):
            par = population[np.random.randint(parents_size)][1]
            children.append(valid(lambda: mutate(par, req["resolution_mutate_prob"], req["arch_mutate_prob"])))
        for _ in range(P - mutation_numbers):
            p1 = population[np.random.randint(parents_size)][1]
            p2 = population[np.random.randint(parents_size)][1]
            children.append(valid(lambda: crossover(p1, p2)))
        population += list(zip(predict(children), children))
        history.append(max(a for a, _ in population))
    return population, history


def random_search(req, predict):
    P = req["population_size"]
    population, history = [], []
    for _ in range(req["max_time_budget"] + 1):
        batch = []
        while len(batch) < P:
            c = random_sample_arch()
            if satisfy(efficiency(c), req["constraints"]):
                batch.append(c)
        population += list(zip(predict(batch), batch))
        history.append(max(a for a, _ in population))
    return population, history


def main():
    req = json.loads(sys.argv[1])
    random.seed(req["seed"])
    np.random.seed(req["seed"])
    kind = "toy"
    predict = toy_oracle
    if req["oracle"] != "toy":
        predict, kind = mlp_oracle(req["oracle"])
    t = time.perf_counter()
    population, history = (evolution if req["algorithm"] == "evolution" else random_search)(req, predict)
    seconds = time.perf_counter() - t
    best_acc, best = max(population, key=lambda x: x[0])
    macs, params, peak = cost(best)
    print(json.dumps({"seconds": seconds, "oracle": kind, "best": best, "best_accuracy": best_acc,
                      "macs": macs, "params": params, "peak_activation_bytes": peak, "history": history,
                      "population": [c for _, c in population], "accuracies": [a for a, _ in population]}))


if __name__ == "__main__":
    main()
