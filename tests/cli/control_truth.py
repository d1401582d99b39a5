#!/usr/bin/env python3
"""Independent truth for an `rtpulse control` results folder.

usage: control_truth.py RUN_FOLDER SUMMARY_STDOUT_FILE

For every scenario of RUN_FOLDER/result.json, from that scenario's jobs.csv alone:
  - response_times.txt is floor((end - release) / 1000) of every job;
  - samples.bin holds one record per job with actual - expected = end - release;
  - result.json's latency (the response time) count, min, max, mean and p99 (nearest rank) and
    its periods add up (jobs + skipped = periods_elapsed);
  - control.json's jobs, releases, skipped, misses (and how many may have missed unseen, in
    result.json too) and its 1 us histograms; its skipped_after_last (the releases the last
    job ran past, which no jobs.csv row counts) by the skip rule from the last job's times:
    max(0, (end - release - 1) // period);
  - the summary line printed on stdout (mean, p99, max response, max latency, median exec).
Prints one line per scenario checked; exits non-zero naming the first difference.
"""
import csv
import json
import math
import os
import statistics
import struct
import sys
from fractions import Fraction
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from samples_reader import read_samples  # noqa: E402  (versions 1 and 2, docs only)

COLUMNS = ["job", "release_ns", "start_ns", "end_ns", "latency_ns", "exec_ns", "response_ns",
           "skipped_before", "miss", "release_known"]
# Empty for a job whose release is unknown (miss: empty unless certain).
UNKNOWABLE = {"release_ns", "latency_ns", "response_ns", "miss"}


def fail(msg):
    sys.exit("control_truth: " + msg)


def rank(p, n):
    return max(1, math.ceil(Fraction(p) * n / 100))


def floor_us(ns):
    return ns // 1000


def us_hist(values):
    h = {}
    for v in values:
        h[v // 1000] = h.get(v // 1000, 0) + 1
    return [[k, h[k]] for k in sorted(h)]


def samples(path):
    """(seq, actual - expected, missed flag) per record."""
    records, trailer = read_samples(path)
    if trailer is None:
        fail(path + ": no trailer (not a finished samples file)")
    return [(r[0], r[2] - r[1], r[6] & 1) for r in records]


def check(folder, scenario, summary_lines):
    name = scenario["name"]
    d = os.path.join(folder, name)
    with open(os.path.join(d, "jobs.csv"), newline="") as f:
        reader = csv.reader(f)
        if next(reader) != COLUMNS:
            fail(name + ": jobs.csv header")
        rows = []
        for r in reader:
            row = dict(zip(COLUMNS, r))
            for k in COLUMNS:
                if row[k] == "" and k in UNKNOWABLE and row["release_known"] == "0":
                    row[k] = None
                else:
                    row[k] = int(row[k])
            rows.append(row)
    if not rows:
        fail(name + ": no jobs")
    c = json.load(open(os.path.join(d, "control.json")))
    # SCHED_DEADLINE re-anchored jobs: release unknown, so no latency and no response (empty
    # in jobs.csv, left out of every statistic); a miss among them only when certain.
    unknown = set(c["release_unknown_jobs"])
    if unknown != {r["job"] for r in rows if r["release_known"] == 0}:
        fail(name + ": jobs.csv's release_known 0 rows are not control.json's release_unknown_jobs")
    kept = [r for r in rows if r["release_known"] == 1]
    for r in rows:
        if r["release_known"] == 0 and (r["release_ns"] is not None or r["miss"] == 0):
            fail("%s: job %d: release unknown, yet release %s, miss %s" %
                 (name, r["job"], r["release_ns"], r["miss"]))
        if r["release_known"] == 0 and r["miss"] == 1 and r["exec_ns"] <= c["deadline_ns"]:
            fail("%s: job %d: an unknown release's miss is certain only when exec > deadline" %
                 (name, r["job"]))
    # Every miss recomputed: a known release misses when end - release > deadline; an unknown
    # one is a certain miss when its execution alone exceeds the deadline, else not known.
    for r in rows:
        if r["release_known"] == 1:
            want = 1 if r["end_ns"] - r["release_ns"] > c["deadline_ns"] else 0
        else:
            want = 1 if r["end_ns"] - r["start_ns"] > c["deadline_ns"] else None
        if r["miss"] != want:
            fail("%s: job %d: miss %s, the timestamps say %s" % (name, r["job"], r["miss"], want))
    resp = [r["end_ns"] - r["release_ns"] for r in kept]
    lat = [r["start_ns"] - r["release_ns"] for r in kept]
    exe = [r["end_ns"] - r["start_ns"] for r in rows]
    for r, v in zip(kept, resp):
        if r["response_ns"] != v or r["latency_ns"] + r["exec_ns"] != v:
            fail("%s: job %d: response != latency + exec" % (name, r["job"]))
    times = [int(x) for x in open(os.path.join(d, "response_times.txt")).read().split()]
    if times != [floor_us(v) for v in resp]:
        fail(name + ": response_times.txt is not floor(response / 1000) of the known releases")
    known = resp
    recs = samples(os.path.join(d, "samples.bin"))
    if [v for _, v, _ in recs] != known:
        fail(name + ": samples.bin latencies are not the response times")
    if [m for _, _, m in recs] != [r["miss"] for r in kept]:
        fail(name + ": samples.bin's missed flags are not the known-release jobs' misses")
    last = rows[-1]
    # An unknown release's grid anchor is the job's start.
    anchor = last["release_ns"] if last["release_known"] else last["start_ns"]
    after_last = max(0, (last["end_ns"] - anchor - 1) // c["period_ns"])
    if c["skipped_after_last"] != after_last:
        fail("%s: control.json skipped_after_last %s != %d" %
             (name, c["skipped_after_last"], after_last))
    skipped = sum(r["skipped_before"] for r in rows[1:]) + after_last
    misses = sum(1 for r in rows if r["miss"] == 1)
    # Unknown releases not known to have missed: every miss count is then a lower bound.
    uncertain = sum(1 for r in rows if r["release_known"] == 0 and r["miss"] != 1)
    n = len(rows)

    t = scenario["latency"]["thread"]
    t = t["0"] if isinstance(t, dict) else t[0]
    st = t["stats"]
    s = sorted(known)
    k_n = len(known)
    if k_n > 0:
        want = {"count": k_n, "min_ns": s[0], "max_ns": s[-1], "p99_ns": s[rank(99, k_n) - 1]}
        for k, v in want.items():
            if st[k] != v:
                fail("%s: result.json %s %s != %s" % (name, k, st[k], v))
        mean = statistics.mean(known)
        if abs(st["mean_ns"] - mean) > 1e-6 * max(1, abs(mean)):
            fail("%s: result.json mean %s != %s" % (name, st["mean_ns"], mean))
    if t["missed_activations"] != misses:
        fail("%s: result.json missed_activations %s != the %d misses of jobs.csv" %
             (name, t["missed_activations"], misses))
    if (t.get("misses_unknown", 0), t.get("missed_activations_is_lower_bound", False)) != \
            (uncertain, uncertain > 0):
        fail("%s: result.json misses_unknown %s, lower bound %s; jobs.csv has %d uncertain" %
             (name, t.get("misses_unknown"), t.get("missed_activations_is_lower_bound"), uncertain))
    if t["grid_restarts"] != len(unknown):
        fail("%s: grid restarts %s != %d" % (name, t["grid_restarts"], len(unknown)))
    if t["periods_elapsed"] != n + skipped or t["skipped_periods"] != skipped:
        fail("%s: periods %s, skipped %s; jobs %d + skipped %d" %
             (name, t["periods_elapsed"], t["skipped_periods"], n, skipped))

    for k, v in {"jobs": n, "releases": n + skipped, "skipped": skipped, "misses": misses,
                 "misses_unknown": uncertain, "misses_is_lower_bound": uncertain > 0}.items():
        if c[k] != v:
            fail("%s: control.json %s %s != %s" % (name, k, c[k], v))
    for k, values in (("wakeup_latency", lat), ("execution", exe), ("response", resp)):
        if c["histograms_us"][k] != us_hist(values):
            fail("%s: control.json histogram %s" % (name, k))

    ts = sorted(floor_us(v) for v in resp)
    # The table's row: the line whose first word is the scenario and that has its columns (a
    # note after the table starts with "SCENARIO:").
    line = [l for l in summary_lines if l.split()[:1] == [name]]
    if len(line) != 1:
        fail("%s: %d summary lines" % (name, len(line)))
    f = line[0].split()
    if ts:
        times = ["%.2f" % statistics.mean(ts), "%d" % ts[rank(99, k_n) - 1], "%d" % ts[-1],
                 "%d" % floor_us(max(lat))]
    else:
        times = ["n/a"] * 4
    want = ["%d" % n, "%d" % skipped, (">=" if uncertain else "") + "%d" % misses] + times + [
        "%.3f" % (statistics.median(exe) / 1000)]
    if f[-8:] != want:
        fail("%s: summary %s != %s" % (name, f[-8:], want))
    note = [l for l in summary_lines if l.startswith(name + ": %d of %d jobs' releases unknown"
                                                        % (len(unknown), n))]
    if bool(unknown) != bool(note):
        fail("%s: %d unknown releases, %d notes under the summary" % (name, len(unknown), len(note)))
    print("%s: %d jobs (%d releases unknown), %d skipped, %d misses checked" %
          (name, n, len(unknown), skipped, misses))


def main():
    folder = sys.argv[1]
    summary = open(sys.argv[2]).read().splitlines()
    result = json.load(open(os.path.join(folder, "result.json")))
    for scenario in result["scenarios"]:
        check(folder, scenario, summary)


if __name__ == "__main__":
    main()
