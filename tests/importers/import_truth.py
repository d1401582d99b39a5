#!/usr/bin/env python3
"""Ground truth for the import tests, computed from the tools' files with nothing of rtpulse.

  import_truth.py cyclictest-json FILE LIMIT_US      per thread: wrapped negatives, overflows, ...
  import_truth.py cyclictest-verbose FILE            per thread: printed samples, 0 lines, mean
  import_truth.py jitterdebugger JSON RAW            per cpu: overflows, jitter bound, true jitter
  import_truth.py cyclictest-hist FILE               per thread of -h/-H text: mean, jitter bound
  import_truth.py samples-bin FILE                   records, and whether seq rises per thread
  import_truth.py nearest-rank KIND FILE             exact nearest-rank percentiles (ns) of the
                                                     samples of a cyclictest -v file (KIND
                                                     cyclictest-verbose: all threads, 0 lines
                                                     left out) or a values file in us (values-us)
  import_truth.py make-values FILE N SEED            writes N whole-microsecond latencies, one a
                                                     line, long-tailed (most 5-30 us, a few ms)

Prints one JSON object. The smallest jitter a clipped histogram allows: every unknown value is
>= the limit (an overflow) or <= the largest negative, so the variance about the true mean c is
at least V(c) = (sum_known (x-c)^2 + sum_over max(L-c,0)^2 + sum_neg max(c-g,0)^2) / N; the
bound is the minimum of V over the values c the file allows for the mean (found here on a grid
and refined, unlike rtpulse's ternary search).
"""
import json
import math
import random
from fractions import Fraction
import struct
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from samples_reader import read_samples  # noqa: E402  (versions 1 and 2, docs only)


def smallest_variance(known, over, limit, neg, neg_max, lo, hi):
    n = sum(c for _, c in known) + over + neg

    def v(c):
        t = sum(k * (x - c) ** 2 for x, k in known)
        if over and limit > c:
            t += over * (limit - c) ** 2
        if neg and c > neg_max:
            t += neg * (c - neg_max) ** 2
        return t / n

    best = min((v(lo + (hi - lo) * i / 2000.0), lo + (hi - lo) * i / 2000.0) for i in range(2001))
    step = (hi - lo) / 2000.0
    c = best[1]
    for _ in range(60):  # refine around the grid's best point
        step /= 2
        for cand in (c - step, c + step):
            if lo <= cand <= hi and v(cand) < v(c):
                c = cand
    return v(c)


def cyclictest_json(path, limit_us):
    doc = json.load(open(path))
    out = {}
    for key, t in doc["thread"].items():
        counts = {int(k): v for k, v in t["histogram"].items()}
        inside = sum(counts.values())
        outside = t["cycles"] - inside
        wrapped = t["avg"] >= 2 ** 63 or t["max"] < t["min"] or t["max"] < 0
        neg = round(t["avg"] * t["cycles"] / 2 ** 64) if wrapped else 0
        over = outside - neg
        g = t["max"] * 1000 if wrapped else None
        known = [(us * 1000, c) for us, c in counts.items()]
        unknown_neg = neg
        if neg == 1:
            known.append((g, 1))
            unknown_neg = 0
        lo = min([x for x, _ in known] + ([g] if unknown_neg else []))
        hi = max([x for x, _ in known] + ([limit_us * 1000] if over else []))
        row = {"cycles": t["cycles"], "negatives": neg, "overflows": over,
               "largest_negative_ns": g}
        if over == 0 and unknown_neg == 0:
            n = sum(c for _, c in known)
            mean = sum(x * c for x, c in known) / n
            row["mean_ns"] = mean
            row["stddev_ns"] = math.sqrt(sum(c * (x - mean) ** 2 for x, c in known) / n)
        else:
            row["stddev_lower_bound_ns"] = math.sqrt(
                smallest_variance(known, over, limit_us * 1000, unknown_neg, g or 0, lo, hi))
        out[key] = row
    return out


def cyclictest_verbose(path):
    out = {}
    for line in open(path):
        parts = line.split(":")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        thread, seq, lat = (int(p) for p in parts)
        row = out.setdefault(str(thread), {"printed": 0, "zero_lines": 0, "sum_us": 0,
                                           "max_us": None, "min_us": None, "seqs": []})
        if lat == 0:
            row["zero_lines"] += 1
            continue
        row["printed"] += 1
        row["sum_us"] += lat
        row["max_us"] = lat if row["max_us"] is None else max(row["max_us"], lat)
        row["min_us"] = lat if row["min_us"] is None else min(row["min_us"], lat)
        row["seqs"].append(seq)
    for row in out.values():
        row["mean_ns"] = row["sum_us"] * 1000 / row["printed"]
        row["seqs_increasing"] = all(a < b for a, b in zip(row["seqs"], row["seqs"][1:]))
        del row["seqs"]
    return out


def jitterdebugger(json_path, raw_path):
    doc = json.load(open(json_path))
    raw = open(raw_path, "rb").read()
    samples = {}
    for i in range(0, len(raw) - len(raw) % 28, 28):
        cpu, _, _, value = struct.unpack("<Iqqq", raw[i:i + 28])
        samples.setdefault(str(cpu), []).append(value * 1000)
    out = {}
    for key, t in doc["cpu"].items():
        counts = {int(k): v for k, v in t["histogram"].items()}
        over = t["count"] - sum(counts.values())
        known = [(us * 1000, c) for us, c in counts.items()]
        mean = t["avg"] * 1000
        row = {"overflows": over, "highest_class_us": max(counts), "max_us": t["max"]}
        if over:
            known.append((t["max"] * 1000, 1))
            row["stddev_lower_bound_ns"] = math.sqrt(
                smallest_variance(known, over - 1, 1000 * 1000, 0, 0, mean - 5, mean + 5))
        s = samples.get(key, [])
        m = sum(s) / len(s)
        row["true_stddev_ns"] = math.sqrt(sum((x - m) ** 2 for x in s) / len(s))
        out[key] = row
    return out


def cyclictest_hist(path):
    rows, sums = [], {}
    for line in open(path):
        if line[:1].isdigit():
            rows.append([int(x) for x in line.split()[1:]])
        for key in ("Avg Latencies", "Max Latencies", "Histogram Overflows"):
            if line.startswith("# " + key + ":"):
                sums[key] = [int(x) for x in line.split(":")[1].split()]
    limit = len(rows)
    out = {}
    for t in range(len(sums["Avg Latencies"])):
        known = [(us * 1000, r[t]) for us, r in enumerate(rows) if r[t]]
        over = sums["Histogram Overflows"][t]
        row = {"overflows": over}
        if over:
            known.append((sums["Max Latencies"][t] * 1000, 1))
            avg = sums["Avg Latencies"][t] * 1000  # truncated: the true mean is in [avg, avg+1us)
            row["mean_ns"] = avg
            row["stddev_lower_bound_ns"] = math.sqrt(
                smallest_variance(known, over - 1, limit * 1000, 0, 0, avg - 5, avg + 1000))
        else:
            n = sum(c for _, c in known)
            row["mean_ns"] = sum(x * c for x, c in known) / n
        out[str(t)] = row
    return out


def samples_bin(path):
    records, trailer = read_samples(path)
    assert trailer is not None and trailer["records"] == len(records)
    last = {}
    increasing = True
    for seq, _exp, _act, thread, *_ in records:
        if thread in last and seq <= last[thread]:
            increasing = False
        last[thread] = seq
    return {"records": len(records), "seq_increasing": increasing}


def nearest_rank(kind, path):
    values = []
    for line in open(path):
        if kind == "cyclictest-verbose":
            parts = line.split(":")
            if len(parts) != 3 or not parts[0].strip().isdigit():
                continue
            lat = int(parts[2])
            if lat != 0:
                values.append(lat * 1000)
        elif line.strip():
            values.append(int(line) * 1000)
    v = sorted(values)
    n = len(v)
    out = {"count": n, "distinct_ns": sorted(set(v))}
    for p in ("50", "95", "99", "99.9", "99.99", "100"):
        # rank = ceil(p/100 * N) in exact rational arithmetic (99.9/100*1000 is 999, not the
        # 999.0000000000001 of floating point)
        rank = max(1, math.ceil(Fraction(p) / 100 * n))
        out["p" + p] = v[rank - 1]
    out["max"] = v[-1]
    return out


def make_values(path, n, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            if rng.random() < 0.003:
                f.write(f"{rng.randint(600, 9000)}\n")  # above 512 us: buckets are > 1 us wide
            else:
                f.write(f"{int(rng.lognormvariate(2.5, 0.4)) + 1}\n")
    return {"written": n}


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "cyclictest-json":
        result = cyclictest_json(sys.argv[2], int(sys.argv[3]))
    elif mode == "cyclictest-verbose":
        result = cyclictest_verbose(sys.argv[2])
    elif mode == "cyclictest-hist":
        result = cyclictest_hist(sys.argv[2])
    elif mode == "samples-bin":
        result = samples_bin(sys.argv[2])
    elif mode == "nearest-rank":
        result = nearest_rank(sys.argv[2], sys.argv[3])
    elif mode == "make-values":
        result = make_values(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        result = jitterdebugger(sys.argv[2], sys.argv[3])
    print(json.dumps(result))
