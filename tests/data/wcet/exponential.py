#!/usr/bin/env python3
"""A well-behaved `values` file and what extreme value statistics should find on it.

    exponential.py OUT N SEED EXCEEDANCE_FRACTION BLOCK P...

Writes N latencies (microseconds, 3 decimals), 20 us + 10 us * Exp(1), independent and
stationary, and prints as JSON, per probability P: the true latency exceeded with probability
P per activation (20 + 10 ln(1/P) us, in ns) and the relative standard deviations of the POT
and Gumbel estimators there from their asymptotic variances (Coles 2001: GPD with xi and sigma
free on N*EXCEEDANCE_FRACTION exceedances; Gumbel on N/BLOCK maxima of BLOCK), plus the
supported range's limit 10^-2/N. Only random.random() is used (the same file with every
Python 3).
"""
import json
import math
import random
import sys

OFFSET_US, MEAN_US = 20.0, 10.0


def main():
    path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    frac, block = float(sys.argv[4]), int(sys.argv[5])
    probabilities = [float(p) for p in sys.argv[6:]]
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            f.write(f"{OFFSET_US - MEAN_US * math.log(1.0 - rng.random()):.3f}\n")
    n_u, blocks = n * frac, n // block
    out = {"min_probability": 1e-2 / n, "levels": []}
    for p in probabilities:
        truth_ns = 1e3 * (OFFSET_US + MEAN_US * math.log(1 / p))
        # POT near xi = 0: x - u = sigma*l*(1 + xi*l/2), l = log(zeta/p); Var(xi) = 1/n_u,
        # Var(sigma)/sigma^2 = 2/n_u, Cov(xi, sigma)/sigma = -1/n_u; log zeta adds 1/n_u.
        l = math.log(frac / p)
        pot_var = (l * l / 4 + 2 - l) / n_u + 1 / (n_u * l * l)
        pot_sd = math.sqrt(pot_var) * 1e3 * MEAN_US * l / truth_ns
        # Gumbel: x = mu + sigma*y, y = -log(-log G), G = (1-p)^block; Var(mu) = 1.109,
        # Var(sigma) = 0.608, Cov = 0.257 (times sigma^2/blocks).
        y = -math.log(-block * math.log1p(-p))
        gumbel_var = (1.109 + 0.608 * y * y + 2 * 0.257 * y) / blocks
        gumbel_sd = math.sqrt(gumbel_var) * 1e3 * MEAN_US / truth_ns
        out["levels"].append({"probability": p, "truth_ns": truth_ns, "pot_relative_sd": pot_sd,
                              "gumbel_relative_sd": gumbel_sd})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
