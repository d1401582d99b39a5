#!/usr/bin/env python3
"""Independent check of a `rtpulse latency --budget ... --json` verdict against the run's
samples log (`rtpulse samples FILE --csv`).

Per thread, the samples in period order; a gap in seq after a sample is the periods that
wake-up skipped, each late from its own deadline to that wake-up (latency - m * interval,
docs/latency.md#per-period-statistics). All threads' periods together, sorted; the
nearest-rank value (rank = ceil(p/100 * N)) must lie in the verdict's [value_lower_ns,
value_ns], the verdict must follow the rule (PASS: upper <= budget, FAIL: lower > budget,
else UNDECIDED) and the margin, the support mark and the run length it needs must match.

usage: verdict_check.py RESULT.json SAMPLES.csv
Prints 'checked ...' and exits 0, or prints the mismatches and exits 1.
"""
import csv
import json
import math
import sys


def nearest_rank(p, n):
    rank = math.ceil(p / 100.0 * n - 1e-9)
    return min(max(rank, 1), n)


def main():
    result = json.load(open(sys.argv[1]))
    verdict = result["verdict"]
    threads = result["thread"]
    samples = {}
    with open(sys.argv[2]) as f:
        for row in csv.DictReader(f):
            samples.setdefault(int(row["thread"]), []).append(
                (int(row["seq"]), int(row["latency_ns"])))
    periods = []
    per_second = 0.0
    for index, t in threads.items():
        interval = t["interval_ns"]
        per_second += 1e9 / interval
        s = sorted(samples.get(int(index), []))
        elapsed = t["periods_elapsed"]
        for n, (seq, latency) in enumerate(s):
            following = s[n + 1][0] if n + 1 < len(s) else elapsed
            for m in range(following - seq):
                periods.append(latency - m * interval)
    periods.sort()
    errors = []

    def expect(what, got, want):
        if got != want:
            errors.append(f"{what}: verdict says {got!r}, the samples log gives {want!r}")

    [row] = verdict["rows"]
    expect("basis", row["basis"], "per_period")
    expect("count", row["count"], len(periods))
    statistic = verdict["statistic"]
    if statistic == "max":
        truth = periods[-1]
        needed = 0
    else:
        p = float(statistic[1:])
        truth = periods[nearest_rank(p, len(periods)) - 1]
        needed = 10.0 / (1.0 - p / 100.0)
        needed = round(needed) if abs(needed - round(needed)) <= 1e-9 * needed else math.ceil(needed)
    lo, hi = row["value_lower_ns"], row["value_ns"]
    if not lo <= truth <= hi:
        errors.append(f"{statistic} {truth} ns is not in the verdict's [{lo}, {hi}]")
    # One histogram bucket: exact below 512 ns, at most 1/512 of its lower edge wide above.
    if hi - lo > max(0, lo // 512):
        errors.append(f"[{lo}, {hi}] is wider than one bucket")
    expect("value_exact", row["value_exact"], lo == hi)
    budget = verdict["budget_ns"]
    if hi <= budget:
        outcome, margin = "PASS", budget - hi
    elif lo > budget:
        outcome, margin = "FAIL", budget - lo
    else:
        outcome, margin = "UNDECIDED", None
    expect("verdict", row["verdict"], outcome)
    expect("margin_ns", row["margin_ns"], margin)
    expect("met", verdict["met"], outcome == "PASS")
    expect("samples_needed", row["samples_needed"], needed)
    expect("supported", row["supported"], len(periods) >= needed)
    if len(periods) < needed:
        want = needed / per_second
        got = row.get("duration_needed_s")
        if got is None or abs(got - want) > 1e-9 * want:
            errors.append(f"duration_needed_s: {got!r}, want {want!r}")
    if errors:
        print("\n".join(errors))
        return 1
    print(f"checked {statistic} {truth} ns in [{lo}, {hi}] of {len(periods)} periods: "
          f"{outcome}, margin {margin}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
