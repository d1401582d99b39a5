#!/usr/bin/env python3
"""Independent check of the OSADL histogram's x range rule (docs/report.md, "Histogram range").

usage: histogram_range.py FIGURES_DIR NAME VALUES...

VALUES are text files of raw latencies in ns (one per line), one per curve: the samples the
test recorded into the histograms. From them alone this script computes the nearest-rank
p99 and p99.99 (as rtpulse reports them: the log-linear bucket's upper edge, clamped to
[min, max]), the limit, the samples beyond it and the maximum; then it checks NAME.dat
(limited) and NAME_full.dat against the raw counts, and prints what the figure's label and
the .dat header must say, one line each:
  label: N samples beyond X us (max M us) not drawn; all classes in NAME_full
  rule: x range rule: ...
"""
import math
import sys


def bucket_upper_edge(v):
    """rtpulse's log-linear histogram (core/histogram.h): exact below 512 ns, then 512
    equal buckets per power of two."""
    m = abs(v)
    if m < 512:
        return v
    e = m.bit_length() - 1
    width = 1 << (e - 9)
    lo = (m // width) * width
    hi = lo + width - 1
    return hi if v >= 0 else -lo


def nearest_rank(values, p):
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return min(max(bucket_upper_edge(ordered[rank - 1]), ordered[0]), ordered[-1])


def ceil_us(ns):
    return -((-ns) // 1000)


def round_up_10(us):
    return max(1, (us + 9) // 10) * 10


def read_dat(path):
    """(x, y) pairs of every data line."""
    points = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            x, y = line.split()
            points.append((float(x), float(y)))
    return points


def main():
    figures, name, value_files = sys.argv[1], sys.argv[2], sys.argv[3:]
    curves = []
    for path in value_files:
        with open(path) as f:
            curves.append([int(line) for line in f if line.strip()])
    merged = [v for c in curves for v in c]
    p99 = nearest_rank(merged, 99)
    p9999 = nearest_rank(merged, 99.99)
    want = max(4 * ceil_us(p99), min(ceil_us(p9999), 10 * ceil_us(p99)))
    limit = round_up_10(max(want, 10))
    # Classes are built from bucket lower edges; the test's values sit far from the limit,
    # so floor(v / 1000) is the class there.
    beyond = sum(1 for v in merged if v // 1000 >= limit)
    assert beyond > 0, "the test run must have samples beyond the limit"

    limited = read_dat(f"{figures}/{name}.dat")
    full = read_dat(f"{figures}/{name}_full.dat")
    assert sum(y for _, y in full) == len(merged), "full .dat must hold every sample"
    assert all(x < limit for x, _ in limited), "limited .dat holds a class beyond the limit"
    assert sum(y for x, y in full if x >= limit) == beyond, "full .dat beyond count"
    assert sum(y for _, y in limited) + beyond == len(merged), "limited + beyond != all"

    s = "" if beyond == 1 else "s"
    print(f"label: {beyond} sample{s} beyond {limit} us (max {max(merged) / 1000:.1f} us) "
          f"not drawn; all classes in {name}_full")
    print(f"rule: x range rule: p99.99 kept between 4 x p99 and 10 x p99, rounded up to a "
          f"multiple of 10 us: p99 {p99 / 1000:.1f} us, p99.99 {p9999 / 1000:.1f} us: x up to "
          f"{limit} us")


if __name__ == "__main__":
    main()
