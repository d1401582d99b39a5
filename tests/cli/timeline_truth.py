#!/usr/bin/env python3
"""Ground truth for the report's latency-over-time figure, without rtpulse's figure code.

Reads `rtpulse samples --csv` output (one line per record), groups the records by the second
of their deadline (expected_ns // 1e9), and per second takes the max and the nearest-rank p99
(rank = ceil(99/100 * N), at least 1, in exact rational arithmetic) of a sorted copy. Then
checks the figure's .dat (index 0: max per second, index 1: p99 per second, x = seconds since
the first second, y in us) and its caption line ("N seconds with samples, A to B samples per
second; M missed periods ... in K seconds").

usage: timeline_truth.py SAMPLES_CSV TIMELINE_DAT
Prints one JSON line {"seconds": N, "samples": S, "missed": M} and exits 0 when every point
and the caption agree; otherwise prints each difference and exits 1.
"""
import csv
import json
import math
import re
import sys
from fractions import Fraction


def truth(csv_path):
    per_second = {}
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            second = int(row["expected_ns"]) // 1_000_000_000
            latency = int(row["actual_ns"]) - int(row["expected_ns"])
            assert latency == int(row["latency_ns"])
            entry = per_second.setdefault(second, {"values": [], "missed": 0})
            entry["values"].append(latency)
            entry["missed"] += int(row["missed"])
    return per_second


def dat_series(dat_path):
    series, notes, current = [], [], None
    with open(dat_path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("# index"):
                current = []
                series.append(current)
            elif line.startswith("#"):
                notes.append(line[1:].strip())
            elif line and current is not None:
                x, y = line.split()
                current.append((float(x), float(y)))
    return series, notes


def main():
    per_second = truth(sys.argv[1])
    series, notes = dat_series(sys.argv[2])
    errors = []
    first = min(per_second)
    want_max, want_p99 = [], []
    for second in sorted(per_second):
        v = sorted(per_second[second]["values"])
        rank = max(1, math.ceil(Fraction(99, 100) * len(v)))
        want_max.append((second - first, v[-1]))
        want_p99.append((second - first, v[rank - 1]))
    for name, want, got in (("max", want_max, series[0]), ("p99", want_p99, series[1])):
        if len(want) != len(got):
            errors.append(f"{name}: {len(got)} points, want {len(want)}")
            continue
        for (wx, wy), (gx, gy) in zip(want, got):
            if gx != wx or round(gy * 1000) != wy:
                errors.append(f"{name} at x={wx}: figure ({gx}, {gy} us), want {wy} ns")
    counts = [len(per_second[s]["values"]) for s in per_second]
    missed = sum(per_second[s]["missed"] for s in per_second)
    seconds_missed = sum(1 for s in per_second if per_second[s]["missed"] > 0)
    caption = re.compile(r"(\d+) seconds with samples, (\d+) to (\d+) samples per second; "
                         r"(\d+) missed periods? \(woke after the next deadline\) in (\d+) seconds?")
    found = [m for m in (caption.search(n) for n in notes) if m]
    want_caption = [len(per_second), min(counts), max(counts), missed, seconds_missed]
    if len(found) != 1:
        errors.append(f"caption line not found once in {notes}")
    elif [int(g) for g in found[0].groups()] != want_caption:
        errors.append(f"caption {found[0].group(0)!r}, want numbers {want_caption}")
    for e in errors:
        print(e)
    print(json.dumps({"seconds": len(per_second), "samples": sum(counts), "missed": missed}))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
