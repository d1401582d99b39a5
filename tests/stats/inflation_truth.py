#!/usr/bin/python3
"""Independent ground truth for stats::RepetitionInflation (nothing of rtpulse).

Reads a file of two lines, "base m1 m2 ..." and "cond m1 m2 ..." (per-repetition median
execution times, ns), and an optional confidence as the second argument, and prints
"base_geomean cond_geomean pct ci_low_pct ci_high_pct df": the ratio of the geometric means
and Welch's t interval on the logarithms, with the standard library and scipy
(statistics.mean / variance, scipy.stats.t). With "--quantile P DF" instead it prints
Student's t quantile.
"""
import math
import statistics
import sys

from scipy.stats import t as student_t


def main():
    if sys.argv[1] == "--quantile":
        print(repr(float(student_t.ppf(float(sys.argv[2]), float(sys.argv[3])))))
        return
    groups = {}
    with open(sys.argv[1]) as f:
        for line in f:
            words = line.split()
            if words:
                groups[words[0]] = [math.log(float(w)) for w in words[1:]]
    confidence = float(sys.argv[2]) if len(sys.argv) > 2 else 0.95
    b, c = groups["base"], groups["cond"]
    vb = statistics.variance(b) / len(b)
    vc = statistics.variance(c) / len(c)
    diff = statistics.mean(c) - statistics.mean(b)
    se = math.sqrt(vb + vc)
    df = (vb + vc) ** 2 / (vb ** 2 / (len(b) - 1) + vc ** 2 / (len(c) - 1))
    q = float(student_t.ppf(1 - (1 - confidence) / 2, df))
    print(f"{math.exp(statistics.mean(b))!r} {math.exp(statistics.mean(c))!r} "
          f"{100 * (math.exp(diff) - 1)!r} {100 * (math.exp(diff - q * se) - 1)!r} "
          f"{100 * (math.exp(diff + q * se) - 1)!r} {df!r}")


if __name__ == "__main__":
    main()
