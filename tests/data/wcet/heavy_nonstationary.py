#!/usr/bin/env python3
"""Writes a `values` file (one latency in microseconds a line, time order) that extreme value
statistics cannot carry far: heavy-tailed and not stationary.

    heavy_nonstationary.py OUT [N] [SEED]

Each value is a base latency that drifts upwards during the run (20 us -> 40 us), plus small
noise, plus, with a probability that grows from 1 % to 9 % during the run, a Pareto burst with
shape 1.2 (xi = 1/1.2 ~ 0.83: infinite variance). Only random.random() is used, so a seed gives
the same file with every Python 3.
"""
import math
import random
import sys


def generate(n, seed):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = i / n
        v = 20.0 + 20.0 * t - 2.0 * math.log(1.0 - rng.random())
        if rng.random() < 0.01 + 0.08 * t:
            v += 5.0 * ((1.0 - rng.random()) ** (-1.0 / 1.2) - 1.0)
        out.append(v)
    return out


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    with open(path, "w") as f:
        f.write("# heavy-tailed, non-stationary latencies (us); tests/data/wcet/heavy_nonstationary.py\n")
        for v in generate(n, seed):
            f.write(f"{v:.3f}\n")


if __name__ == "__main__":
    main()
