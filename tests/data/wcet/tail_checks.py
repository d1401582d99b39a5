#!/usr/bin/env python3
"""Independent numbers for the wcet refusal test: reads a `values` file (microseconds, one a
line, time order) and prints, as JSON, what `rtpulse wcet` should find on it.

    tail_checks.py VALUES THRESHOLD_NS [BLOCK] [DECADES]

samples, blocks (whole blocks of BLOCK), min_probability (10^-DECADES / samples used, per
method), and over THRESHOLD_NS: the exceedances, the Ferro-Segers extremal index and the
first-half/second-half two-proportion z statistic and p-value with the variance inflated by
1/extremal index (docs/wcet.md, "Checks"). Written from the formulas, not from the C++.
"""
import json
import math
import sys


def extremal_index(x, u):
    times = [i for i, v in enumerate(x) if v > u]
    gaps = [b - a for a, b in zip(times, times[1:])]
    if len(gaps) < 2:
        return None
    n = len(gaps)
    if max(gaps) <= 2:
        theta = 2 * sum(gaps) ** 2 / (n * sum(t * t for t in gaps))
    else:
        s2 = sum((t - 1) * (t - 2) for t in gaps)
        theta = 2 * sum(t - 1 for t in gaps) ** 2 / (n * s2) if s2 > 0 else 1.0
    return min(1.0, theta)


def main():
    path, u = sys.argv[1], float(sys.argv[2])
    block = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    decades = float(sys.argv[4]) if len(sys.argv) > 4 else 2
    x = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                # the importer's exact scaling: microseconds with 3 decimals -> whole ns
                whole, _, frac = line.partition(".")
                x.append(int(whole) * 1000 + int((frac + "000")[:3]))
    n = len(x)
    blocks = n // block
    theta = extremal_index(x, u)
    half = n // 2
    a = sum(1 for v in x[:half] if v > u)
    b = sum(1 for v in x[half:2 * half] if v > u)
    pooled = (a + b) / (2 * half)
    inflation = 1 / min(1.0, theta) if theta else 1.0
    z = (a / half - b / half) / math.sqrt(pooled * (1 - pooled) * (2 / half) * inflation)
    print(json.dumps({
        "samples": n,
        "blocks": blocks,
        "pot_min_probability": 10 ** -decades / n,
        "bm_min_probability": 10 ** -decades / (blocks * block) if blocks else None,
        "exceedances": sum(1 for v in x if v > u),
        "first_half": a,
        "second_half": b,
        "extremal_index": theta,
        "stationarity_z": z,
        "stationarity_p": math.erfc(abs(z) / math.sqrt(2)),
    }))


if __name__ == "__main__":
    main()
