#!/usr/bin/env python3
"""Recomputes rtpulse.prom's latency numbers from the run's samples file, independently of
rtpulse's C++ (docs/fleet.md#metrics): per thread the count, sum, min, max, every cumulative
bucket of rtpulse_latency_seconds and the nearest-rank percentiles, and checks the file says
exactly that. The one rule taken from the docs: a sample counts at or below a bound when the
upper edge of rtpulse's own histogram bucket holding it is (values below 1024 ns have their own
bucket; above, 2^e .. 2^(e+1) is cut in 512 equal buckets).

Usage: textfile_truth.py SAMPLES PROM   (exit 0: every number agrees; 1 with what differs)
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from samples_reader import read_samples  # noqa: E402

BOUNDS_NS = [m * 10**d for d in range(1, 6) for m in (100, 125, 160, 200, 250, 320, 400, 500, 640, 800)]
BOUNDS_NS.append(100_000_000)


def bucket_hi(v):
    """Upper edge of rtpulse's bucket holding v (v >= 0); None for the top bucket."""
    if v >= 1 << 40:
        return None
    if v < 1024:
        return v
    width = 1 << (v.bit_length() - 1 - 9)
    return v - v % width + width - 1


def le_text(ns):
    """The le label as rtpulse writes it: the shortest decimal of ns / 1e9 (Python's repr)."""
    return repr(ns / 1e9)


def main():
    samples, prom = sys.argv[1], sys.argv[2]
    records, _ = read_samples(samples)
    per_thread = {}
    for r in records:
        per_thread.setdefault(r[3], []).append(r[2] - r[1])
    text = open(prom).read()
    values = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = re.match(r'^([a-z_:]+)(\{.*\})? (\S+)$', line)
        if not m:
            print("unparsable line:", line)
            return 1
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        values[(m.group(1), tuple(sorted(labels.items())))] = float(m.group(3))

    def get(name, thread, **extra):
        for (n, labels), v in values.items():
            d = dict(labels)
            if n == name and d.get("thread") == str(thread) and all(d.get(k) == x for k, x in extra.items()):
                return v
        return None

    bad = []
    if not per_thread:
        bad.append("the samples file holds no sample")
    for thread, lat in sorted(per_thread.items()):
        n = len(lat)
        checks = [("rtpulse_latency_seconds_count", {}, n),
                  ("rtpulse_latency_seconds_sum", {}, sum(lat) / 1e9),
                  ("rtpulse_latency_min_seconds", {}, min(lat) / 1e9),
                  ("rtpulse_latency_max_seconds", {}, max(lat) / 1e9),
                  ("rtpulse_latency_seconds_bucket", {"le": "+Inf"}, n)]
        for b in BOUNDS_NS:
            c = sum(1 for v in lat if v < 0 or (bucket_hi(v) is not None and bucket_hi(v) <= b))
            checks.append(("rtpulse_latency_seconds_bucket", {"le": le_text(b)}, c))
        for name, extra, want in checks:
            got = get(name, thread, **extra)
            if got is None or abs(got - want) > 1e-12 * max(1.0, abs(want)):
                bad.append(f"thread {thread} {name} {extra}: file {got}, samples {want}")
        s = sorted(lat)
        for p in (50, 99, 99.9, 99.99):
            rank = max(1, math.ceil(p / 100 * n - 1e-9))
            exact = s[rank - 1]
            got = get("rtpulse_latency_percentile_seconds", thread, percentile=("%g" % p))
            # rtpulse reports the upper edge of the sample's bucket, clamped to the max.
            want = min(bucket_hi(exact) if exact >= 0 and bucket_hi(exact) is not None else exact, max(lat))
            if got is None or abs(got * 1e9 - want) > 0.5:
                bad.append(f"thread {thread} p{p}: file {got}, samples {exact} ns (bucket edge {want})")
    for b in bad:
        print(b)
    print(f"textfile_truth: {len(per_thread)} threads, {len(records)} samples, {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
