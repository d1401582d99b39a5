#!/usr/bin/python3
"""Independent ground truth for stats::ExecInflation (nothing of rtpulse).

Reads a file of two lines, "base v1 v2 ..." and "cond v1 v2 ...", and an optional confidence
as the second argument, and prints "base_median cond_median pct ci_low_pct ci_high_pct" for
Price & Bonett's (2002) interval for a ratio of two independent medians, computed with the
standard library and scipy (statistics.median, scipy.stats.norm and binom).
"""
import math
import statistics
import sys

from scipy.stats import binom, norm


def log_median_se(values):
    y = sorted(values)
    n = len(y)
    a = max(1, int(math.floor(n / 2 - math.sqrt(n) + 0.5)))
    low = math.log(y[a - 1])
    high = math.log(y[n - a])
    z0 = norm.ppf(1 - binom.cdf(a - 1, n, 0.5))
    return statistics.median(y), (high - low) / (2 * z0)


def main():
    groups = {}
    with open(sys.argv[1]) as f:
        for line in f:
            words = line.split()
            if words:
                groups[words[0]] = [int(w) for w in words[1:]]
    confidence = float(sys.argv[2]) if len(sys.argv) > 2 else 0.95
    base_median, base_se = log_median_se(groups["base"])
    cond_median, cond_se = log_median_se(groups["cond"])
    z = norm.ppf(1 - (1 - confidence) / 2)
    log_ratio = math.log(cond_median / base_median)
    se = math.hypot(base_se, cond_se)
    print(f"{base_median!r} {cond_median!r} {100 * (cond_median / base_median - 1)!r} "
          f"{100 * (math.exp(log_ratio - z * se) - 1)!r} {100 * (math.exp(log_ratio + z * se) - 1)!r}")


if __name__ == "__main__":
    main()
