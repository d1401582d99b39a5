#!/usr/bin/env python3
"""Independent check of `rtpulse suite --tune-ab` (tests/cli/tune_ab_cli_test.cc).

Usage: check_tune_ab.py RUN_DIR STDOUT_FILE
Recomputes from the run folder, without rtpulse's code:
  - the block order (ABBA per knob: odd pairs off then on, even pairs on then off),
  - each block's p99.9 and max against its row in statistical_summary.json,
  - per knob, scenario and metric: the paired differences on - off, their median, the
    sign-test interval (k-th smallest and k-th largest, k the largest with
    1 - 2 P(Bin(n, 1/2) <= k-1) >= confidence) and its coverage,
  - the lines of the printed summary built from those numbers.
Prints "ok" and exits 0, or prints every mismatch and exits 1.
"""
import json
import math
import sys

run_dir, stdout_file = sys.argv[1], sys.argv[2]
result = json.load(open(f"{run_dir}/result.json"))
summary = json.load(open(f"{run_dir}/statistical_summary.json"))
printed = open(stdout_file).read()
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def binom_cdf(n, j):
    return sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n


ab = result["tune_ab"]
pairs = ab["pairs"]
level = ab["confidence"]
rows = {r["scenario"]: r for r in summary["scenarios"]}
base = sorted({b["scenario"] for k in ab["knobs"] if k["applies"] for b in k["blocks"]},
              key=lambda s: [b["scenario"] for k in ab["knobs"] if k["applies"]
                             for b in k["blocks"]].index(s))

expected_order = []
for k in ab["knobs"]:
    if not k["applies"]:
        continue
    for p in range(1, pairs + 1):
        for cond in (("off", "on") if p % 2 else ("on", "off")):
            for s in base:
                expected_order.append(f"{s}-{k['knob']}-{p:02d}-{cond}")
check(ab["order"] == expected_order, f"order {ab['order']} != {expected_order}")
check([s["name"] for s in result["scenarios"]] == expected_order,
      "result.json scenarios are not the blocks in run order")

def us(ns):
    return f"{ns / 1000.0:.1f}"


def sus(ns):
    return f"{ns / 1000.0:+.1f}"


for k in ab["knobs"]:
    if not k["applies"]:
        check(f"  {k['knob']}: {k['detail']}" in printed, f"knob line for {k['knob']} not printed")
        continue
    blocks = {b["block"]: b for b in k["blocks"]}
    for b in k["blocks"]:
        if not b["measured"]:
            continue
        row = rows.get(b["block"])
        check(row is not None, f"no summary row for {b['block']}")
        if row:
            check(b["p99.9_ns"] == row["p99.9_ns"], f"{b['block']} p99.9 {b['p99.9_ns']} != {row['p99.9_ns']}")
            check(b["max_ns"] == row["max_ns"], f"{b['block']} max {b['max_ns']} != {row['max_ns']}")
        if b["condition"] == "on":
            applied = [c for c in b["tuning"] if c["status"] == "applied"]
            check(applied and all(c["restored"] for c in applied),
                  f"{b['block']}: not every applied change restored")
    for e in k["effects"]:
        s, metric = e["scenario"], e["metric"]
        key = "p99.9_ns" if metric == "p99.9" else "max_ns"
        offs, ons = [], []
        for p in range(1, pairs + 1):
            off = blocks[f"{s}-{k['knob']}-{p:02d}-off"]
            on = blocks[f"{s}-{k['knob']}-{p:02d}-on"]
            if off["measured"] and on["measured"] and off[key.replace("_ns", "_exact")] \
                    and on[key.replace("_ns", "_exact")]:
                offs.append(off[key])
                ons.append(on[key])
        d = [b - a for a, b in zip(offs, ons)]
        label = f"{k['knob']} {s} {metric}"
        check(e["pairs_used"] == len(d), f"{label}: pairs_used {e['pairs_used']} != {len(d)}")
        check(e["differences_ns"] == d, f"{label}: differences {e['differences_ns']} != {d}")
        n = len(d)
        kk = 0
        while kk + 1 <= n // 2 and 1 - 2 * binom_cdf(n, kk) >= level:
            kk += 1
        line = f"    {s} {metric:<6}"
        if kk == 0:
            check(not e["measurable"], f"{label}: measurable with {n} pairs")
            note = f"not measurable: fewer than 6 complete pairs ({n})"
            check(e["note"] == note, f"{label}: note {e.get('note')!r}")
            check(e["median_difference_ns"] is None, f"{label}: a number where none is known")
            check(f"{line} {note}\n" in printed, f"{label}: line not printed: {line} {note}")
            continue
        ds = sorted(d)
        want = {"off_median_ns": median(offs), "on_median_ns": median(ons),
                "median_difference_ns": median(d), "ci_low_ns": ds[kk - 1],
                "ci_high_ns": ds[n - kk], "coverage": 1 - 2 * binom_cdf(n, kk - 1),
                "on_lower_pairs": sum(1 for x in d if x < 0)}
        check(e["measurable"], f"{label}: not measurable with {n} pairs")
        for field, value in want.items():
            check(abs(e[field] - value) <= 1e-9 * max(1, abs(value)),
                  f"{label}: {field} {e[field]} != {value}")
        text = (f"{line} off {us(want['off_median_ns'])} us, on {us(want['on_median_ns'])} us; "
                f"on - off {sus(want['median_difference_ns'])} us, interval "
                f"[{sus(want['ci_low_ns'])}, {sus(want['ci_high_ns'])}] us "
                f"({100 * want['coverage']:.1f}%, {n} pairs, on lower in {want['on_lower_pairs']})\n")
        check(text in printed, f"{label}: line not printed: {text!r}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok")
