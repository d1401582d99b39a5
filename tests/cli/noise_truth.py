#!/usr/bin/env python3
"""Independent check of `rtpulse noise`'s numbers: noise_truth.py JSON EVENTS_CSV STDOUT

From the events file alone (one line per noise event) and the run's raw counts, for every CPU:
  - the events, their sum (noise) and the largest event agree with the JSON's rtpulse block;
  - noise per second and % available are recomputed from noise and duration;
  - every histogram bucket whose gaps all lie above the threshold holds exactly the events
    that fall in it; the buckets add up to the gaps;
  - oslat's thread object (min/max in whole us rounded up, avg, duration, histogram) and the
    text printed on stdout (oslat's lines, the summary row) say the same;
  - with --explain, every explained event's causes add up to its gap, and the CPU's causes
    (explained and not, their time, each kind's time and events, the rows' total, the
    summary's causes line) are those of the events file.
Prints one line per CPU checked; exits non-zero naming the first difference.
"""
import csv
import json
import math
import sys


def fail(message):
    print("noise_truth: " + message, file=sys.stderr)
    sys.exit(1)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


KINDS = ["irq", "softirq", "thread", "switch-in", "idle", "unaccounted"]


def check_causes(cpu, c, rows, stdout):
    causes = c.get("causes")
    if causes is None:
        fail("cpu %d: --explain ran, but the CPU has no causes" % cpu)
    explained = [r for r in rows if r["irq_ns"] != ""]
    for r in explained:
        parts = [int(r[k + "_ns"]) for k in KINDS]
        if sum(parts) != int(r["gap_ns"]) or min(parts) < 0:
            fail("cpu %d: event at %s: causes %r do not add up to its gap %s"
                 % (cpu, r["start_ns"], parts, r["gap_ns"]))
        if not r["largest"]:
            fail("cpu %d: event at %s explained without its largest cause" % (cpu, r["start_ns"]))
    for r in rows:
        if r["irq_ns"] == "" and any(r[k + "_ns"] != "" for k in KINDS):
            fail("cpu %d: event at %s half explained" % (cpu, r["start_ns"]))
    total = sum(int(r["gap_ns"]) for r in explained)
    want = {"explained": len(explained), "not_explained": len(rows) - len(explained),
            "explained_ns": total}
    for key, value in want.items():
        if causes[key] != value:
            fail("cpu %d: causes %s %r != %r" % (cpu, key, causes[key], value))
    for k in KINDS:
        ns = sum(int(r[k + "_ns"]) for r in explained)
        events = sum(1 for r in explained if int(r[k + "_ns"]) > 0)
        got = causes["by_kind"][k]
        if got["ns"] != ns or got["events"] != events:
            fail("cpu %d: %s %r != %d ns in %d events" % (cpu, k, got, ns, events))
    if sum(r["ns"] for r in causes["rows"]) != total:
        fail("cpu %d: the cause rows do not add up to the explained time" % cpu)
    line = "cpu %d causes: %d of %d events explained" % (cpu, len(explained), len(rows))
    if total > 0:
        line += " (%d ns):" % total + ",".join(
            " %s %.1f %% (%d ns in %d events)" % (k, 100.0 * causes["by_kind"][k]["ns"] / total,
                                                  causes["by_kind"][k]["ns"],
                                                  causes["by_kind"][k]["events"])
            for k in KINDS if causes["by_kind"][k]["ns"] > 0)
    if line + "\n" not in stdout:
        fail("cpu %d: stdout lacks the causes line %r" % (cpu, line))
    return len(explained)


def main():
    doc = json.load(open(sys.argv[1]))
    rows = list(csv.DictReader(open(sys.argv[2])))
    stdout = open(sys.argv[3]).read()
    block = doc["rtpulse"]
    width = block["bucket_width_ns"]
    threshold = block["threshold_ns"]
    for index, c in enumerate(block["cpus"]):
        cpu = c["cpu"]
        gaps = [int(r["gap_ns"]) for r in rows if int(r["cpu"]) == cpu]
        starts = [int(r["start_ns"]) for r in rows if int(r["cpu"]) == cpu]
        if starts != sorted(starts):
            fail("cpu %d: events not in time order" % cpu)
        if c["events_not_kept"] != 0:
            fail("cpu %d: %d events not kept; the check needs them all" % (cpu, c["events_not_kept"]))
        if c["events"] != len(gaps):
            fail("cpu %d: events %d != %d lines" % (cpu, c["events"], len(gaps)))
        if any(g <= threshold for g in gaps):
            fail("cpu %d: an event at or below the threshold" % cpu)
        noise = sum(gaps)
        if c["noise_ns"] != noise:
            fail("cpu %d: noise_ns %d != %d" % (cpu, c["noise_ns"], noise))
        if gaps and c["max_gap_ns"] != max(gaps) and c["max_gap_ns"] <= threshold:
            fail("cpu %d: max gap %d below the largest event %d" % (cpu, c["max_gap_ns"], max(gaps)))
        if gaps and c["max_gap_ns"] < max(gaps):
            fail("cpu %d: max gap %d below the largest event %d" % (cpu, c["max_gap_ns"], max(gaps)))
        d = c["duration_ns"]
        if not close(c["available_percent"], 100.0 * (1 - noise / d)):
            fail("cpu %d: available %r" % (cpu, c["available_percent"]))
        if not close(c["noise_ns_per_s"], noise * 1e9 / d):
            fail("cpu %d: noise per second %r" % (cpu, c["noise_ns_per_s"]))
        if not close(c["mean_gap_ns"], d / c["gaps"]):
            fail("cpu %d: mean gap %r" % (cpu, c["mean_gap_ns"]))
        h = c["histogram"]
        if sum(h) != c["gaps"]:
            fail("cpu %d: histogram holds %d, gaps %d" % (cpu, sum(h), c["gaps"]))
        last = len(h) - 1
        for k in range(len(h)):
            if k * width < threshold:
                continue  # this bucket also holds gaps that are not events
            lo, hi = k * width, (k + 1) * width
            want = sum(1 for g in gaps if g > lo and (g <= hi or k == last))
            if h[k] != want:
                fail("cpu %d: bucket %d holds %d, events in it %d" % (cpu, k, h[k], want))
        t = doc["thread"][str(index)]
        us = lambda ns: (ns + 999) // 1000
        want = {"cpu": cpu, "min": us(c["min_gap_ns"]), "max": us(c["max_gap_ns"])}
        for key, value in want.items():
            if t[key] != value:
                fail("cpu %d: oslat %s %r != %r" % (cpu, key, t[key], value))
        if not close(t["avg"], d / c["gaps"] / 1000) or not close(t["duration"], d / 1e9):
            fail("cpu %d: oslat avg or duration" % cpu)
        if [t["histogram"][str(k + 1)] for k in range(len(h))] != h:
            fail("cpu %d: oslat histogram" % cpu)
        if "     Maximum:\t %d (us)\n" % us(c["max_gap_ns"]) not in stdout:
            fail("cpu %d: stdout's Maximum" % cpu)
        row = [l.split() for l in stdout.splitlines() if l.split()[:1] == [str(cpu)]]
        want_row = [str(cpu), "%.3f" % (d / 1e9), str(c["gaps"]), "%.1f" % (d / c["gaps"]),
                    str(c["max_gap_ns"]), str(len(gaps)), "%.0f" % (noise * 1e9 / d),
                    "%.4f" % (100.0 * (1 - noise / d))]
        if want_row not in row:
            fail("cpu %d: summary row %r, want %r" % (cpu, row, want_row))
        explained = ""
        if block.get("explain"):
            n = check_causes(cpu, c, [r for r in rows if int(r["cpu"]) == cpu], stdout)
            explained = ", %d explained" % n
        print("cpu %d: %d gaps, %d events, %d ns of noise checked%s"
              % (cpu, c["gaps"], len(gaps), noise, explained))


if __name__ == "__main__":
    main()
