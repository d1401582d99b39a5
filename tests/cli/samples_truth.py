#!/usr/bin/env python3
"""Ground truth for exact percentiles from an rtpulse samples file, without rtpulse.

Reads the binary file as docs/samples-format.md describes it (64-byte header, 32-byte
records, optional 32-byte trailer), sorts each stream's latencies and takes nearest ranks
(rank = ceil(p/100*N), at least 1, in exact rational arithmetic).

usage: samples_truth.py FILE --threads IDX:INTERVAL_NS:PERIODS_ELAPSED[,...]
                        [--wake VALUE] [--percentiles 50,95,...]

Per wake-up: every record's actual - expected. Per period (docs/latency.md): a record of seq
s followed by the thread's next record of seq s' (or periods_elapsed after its last record)
swallowed k = s' - s - 1 periods and counts k + 1 times: latency - j*interval, j = 0..k.
Prints JSON: {"all": STREAM, "all_per_period": STREAM, "threads": {IDX: {"wakeup": STREAM,
"period": STREAM}}}, STREAM = {"count", "min", "max", "mean", "p50", ...} in ns.
"""
import argparse
import json
import math
import struct
import sys
from fractions import Fraction
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from samples_reader import read_samples  # noqa: E402  (versions 1 and 2, docs only)


def read_records(path):
    records, _ = read_samples(path)
    for seq, expected, actual, thread, _cpu, wake, _flags, _reserved in records:
        yield seq, actual - expected, thread, wake


def label(p):
    text = str(p)
    return "p" + (text[:-2] if text.endswith(".0") else text)


def stream(values, percentiles):
    v = sorted(values)
    out = {"count": len(v)}
    if not v:
        return out
    out["min"], out["max"] = v[0], v[-1]
    out["mean"] = sum(v) / len(v)
    for p in percentiles:
        rank = max(1, math.ceil(Fraction(p) / 100 * len(v)))
        out[label(p)] = v[rank - 1]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--threads", required=True)
    ap.add_argument("--wake", type=int)
    ap.add_argument("--percentiles", default="50,90,99,99.9,99.99,99.999")
    a = ap.parse_args()
    percentiles = a.percentiles.split(",")
    threads = {}
    for t in a.threads.split(","):
        idx, interval, elapsed = (int(x) for x in t.split(":"))
        threads[idx] = (interval, elapsed)
    per_thread = {idx: [] for idx in threads}
    for seq, latency, thread, wake in read_records(a.file):
        if a.wake is not None and wake != a.wake:
            continue
        if thread in per_thread:
            per_thread[thread].append((seq, latency))
    result = {"threads": {}}
    every, every_period = [], []
    for idx, recs in per_thread.items():
        recs.sort()
        interval, elapsed = threads[idx]
        wakeup = [lat for _, lat in recs]
        period = []
        for n, (seq, lat) in enumerate(recs):
            nxt = recs[n + 1][0] if n + 1 < len(recs) else elapsed
            for j in range(max(0, nxt - seq - 1) + 1):
                period.append(lat - j * interval)
        every += wakeup
        every_period += period
        result["threads"][str(idx)] = {"wakeup": stream(wakeup, percentiles),
                                       "period": stream(period, percentiles)}
    result["all"] = stream(every, percentiles)
    result["all_per_period"] = stream(every_period, percentiles)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
