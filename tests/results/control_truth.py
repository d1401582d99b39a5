#!/usr/bin/env python3
"""Independent truth for statistical_report.txt (results/control_result).

usage: control_truth.py response_times.txt jobs.csv [SKIPPED_AFTER_LAST]

SKIPPED_AFTER_LAST (default 0) is the releases the last job ran past, which jobs.csv cannot
show (control.json's skipped_after_last); they count in the skipped releases and releases.

Checks that response_times.txt holds floor(response_ns / 1000) of every jobs.csv row whose
release is known (release_known 1; the others leave release, latency and response empty and
have no response), then prints the blocks the report must contain, separated by "--" lines:
the study's table (Python's `statistics` module: mean, median, sample stdev; P90/P99 by
nearest rank with exact rational ranks), rtpulse's per-duration percentiles over the ns values
(latency and response over the known releases, execution over every job), and the counts.
"""
import csv
import math
import statistics
import sys
from fractions import Fraction

COLUMNS = ["job", "release_ns", "start_ns", "end_ns", "latency_ns", "exec_ns", "response_ns",
           "skipped_before", "miss", "release_known"]
QUANTILES = [("p50", "50"), ("p90", "90"), ("p99", "99"), ("p99.9", "99.9"),
             ("p99.99", "99.99"), ("p99.999", "99.999")]


def rank(p, n):
    """Nearest rank ceil(p/100 * n), exact, at least 1."""
    return max(1, math.ceil(Fraction(p) * n / 100))


def min_count(p):
    """Smallest n whose nearest-rank p is not the maximum: n - ceil(p n / 100) >= 1, that is
    floor(n (100 - p) / 100) >= 1, that is n >= 100 / (100 - p)."""
    return math.ceil(Fraction(100) / (100 - Fraction(p)))


def us(ns):
    sign = "-" if ns < 0 else ""
    return "%s%d.%03d" % (sign, abs(ns) // 1000, abs(ns) % 1000)


def duration_block(heading, values):
    values = sorted(values)
    n = len(values)
    if n == 0:
        return heading + ":\n  n/a: no job's release is known"
    lines = [heading + ":", "  min: %s us" % us(values[0])]
    for label, p in QUANTILES:
        if n < min_count(p):
            lines.append("  %s: n/a: needs >= %d jobs" % (label, min_count(p)))
        else:
            lines.append("  %s: %s us" % (label, us(values[rank(p, n) - 1])))
    lines.append("  max: %s us" % us(values[-1]))
    return "\n".join(lines)


def main():
    times = [int(line) for line in open(sys.argv[1]).read().splitlines()]
    with open(sys.argv[2], newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == COLUMNS
        rows = [{k: (int(v) if v != "" else None) for k, v in zip(COLUMNS, r)} for r in reader]
    known = [r for r in rows if r["release_known"] == 1]
    unknown = [r for r in rows if r["release_known"] == 0]
    if len(known) + len(unknown) != len(rows):
        sys.exit("jobs.csv: a release_known other than 0 or 1")
    for r in unknown:
        if r["release_ns"] is not None or r["latency_ns"] is not None or r["miss"] == 0:
            sys.exit("jobs.csv: job %d's release is unknown, yet it has a release, a latency or "
                     "miss 0" % r["job"])
    expected_times = [(r["end_ns"] - r["release_ns"]) // 1000 for r in known]
    if times != expected_times:
        sys.exit("response_times.txt is not floor(response_ns / 1000) of jobs.csv")
    n = len(times)
    s = sorted(times)
    if n > 0:
        study = ["Count: %d" % n, "Sum: %d" % sum(times), "Mean: %.2f" % statistics.mean(times),
                 "Median: %.2f" % statistics.median(times), "Min: %d" % s[0], "Max: %d" % s[-1],
                 "StdDev: %.2f" % statistics.stdev(times) if n >= 2
                 else "StdDev: n/a (needs >= 2 values)",
                 "P90: %d" % s[rank("90", n) - 1], "P99: %d" % s[rank("99", n) - 1]]
    else:
        study = ["Count: 0"]
    blocks = ["\n".join(study)]
    if rows:  # no job at all: no statistics section (the C++ leaves it out too)
        blocks.append(duration_block("Wake-up latency (start - release)",
                                     [r["start_ns"] - r["release_ns"] for r in known]))
        blocks.append(duration_block("Execution (end - start)",
                                     [r["end_ns"] - r["start_ns"] for r in rows]))
        blocks.append(duration_block("Response (end - release)",
                                     [r["end_ns"] - r["release_ns"] for r in known]))
    after_last = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    skipped = sum(r["skipped_before"] for r in rows) + after_last
    jobs = len(rows)
    blocks.append("Releases: %d\n" % (jobs + skipped))
    blocks.append("Jobs: %d\nReleases unknown: %d%s" % (
        jobs, len(unknown), "" if not unknown else " job (" if len(unknown) == 1 else " jobs ("))
    if unknown:
        blocks.append("%d of them certain misses" % sum(1 for r in unknown if r["miss"] == 1))
    blocks.append("Skipped releases: %d (%d after the last job)\n" % (skipped, after_last))
    uncertain = sum(1 for r in unknown if r["miss"] is None)
    blocks.append("Deadline misses: %s%d (" % ("at least " if uncertain else "",
                                               sum(1 for r in rows if r["miss"] == 1)))
    sys.stdout.write("\n--\n".join(blocks))


if __name__ == "__main__":
    main()
