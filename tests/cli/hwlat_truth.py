#!/usr/bin/env python3
"""Independent check of `rtpulse hwlat`'s numbers: hwlat_truth.py JSON EVENTS_CSV REPORT STDOUT

From the events file alone (each gap above the threshold with its causes, from the kernel
trace) and the run's per-CPU durations:
  - the samples are exactly the explained gaps whose unaccounted time is above the threshold,
    with that time as their latency, in time order;
  - each CPU's examined and not examined gaps, the count, the largest sample, the time measured,
    the MTBF (time measured / samples, none without a sample), the histogram in whole us
    (rounded up) and the hard-limit verdict agree with the JSON;
  - hwlatdetect's report (Max Latency, Samples recorded, one ts line per sample) and rtpulse's
    PASS/FAIL line say the same.
Prints one line; exits non-zero naming the first difference.
"""
import csv
import json
import sys


def fail(message):
    print("hwlat_truth: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    doc = json.load(open(sys.argv[1]))
    rows = list(csv.DictReader(open(sys.argv[2])))
    report = open(sys.argv[3]).read()
    stdout = open(sys.argv[4]).read()
    threshold, hardlimit = doc["threshold_ns"], doc["hardlimit_ns"]
    us = lambda ns: (ns + 999) // 1000
    want = []
    for c in doc["cpus"]:
        mine = [r for r in rows if int(r["cpu"]) == c["cpu"] and int(r["gap_ns"]) > threshold]
        explained = [r for r in mine if r["unaccounted_ns"] != ""]
        if c["examined"] != len(explained) or c["not_examined"] != len(mine) - len(explained):
            fail("cpu %d: examined %d / not %d, events file %d / %d" % (
                c["cpu"], c["examined"], c["not_examined"], len(explained),
                len(mine) - len(explained)))
        for r in explained:
            lost = int(r["unaccounted_ns"])
            if lost > threshold:
                want.append((int(r["start_ns"]), c["cpu"], lost, int(r["gap_ns"])))
    want.sort()
    got = [(s["start_ns"], s["cpu"], s["latency_ns"], s["gap_ns"]) for s in doc["samples"]]
    if got != want:
        fail("samples %r != %r" % (got[:5], want[:5]))
    latencies = [w[2] for w in want]
    top = max(latencies, default=0)
    measured = sum(c["duration_ns"] for c in doc["cpus"]) / 1e9
    histogram = {}
    for ns in latencies:
        histogram[str(us(ns))] = histogram.get(str(us(ns)), 0) + 1
    checks = {"count": len(want), "max_ns": top, "histogram_us": histogram,
              "failed": top > hardlimit}
    for key, value in checks.items():
        if doc[key] != value:
            fail("%s %r != %r" % (key, doc[key], value))
    if abs(doc["measured_s"] - measured) > 1e-9 * max(1.0, measured):
        fail("measured_s %r != %r" % (doc["measured_s"], measured))
    mtbf = measured / len(want) if want else None
    if (mtbf is None) != (doc["mtbf_s"] is None) or (
            mtbf is not None and abs(doc["mtbf_s"] - mtbf) > 1e-9 * mtbf):
        fail("mtbf_s %r != %r" % (doc["mtbf_s"], mtbf))
    line = "Max Latency: %s\n" % ("%dus" % us(top) if top else "Below threshold")
    if line not in report or "Samples recorded: %d\n" % len(want) not in report:
        fail("report's Max Latency or Samples recorded")
    inner = [int(l.split("inner:")[1].split(",")[0]) for l in report.splitlines()
             if l.startswith("ts: ")]
    if inner != [us(w[2]) for w in want]:
        fail("report's ts lines %r" % inner[:5])
    verdict = ("FAIL: max %d ns is above the hard limit %d ns\n" % (top, hardlimit)
               if top > hardlimit else "PASS: max %d ns, hard limit %d ns\n" % (top, hardlimit))
    if verdict not in stdout:
        fail("stdout lacks %r" % verdict)
    print("hwlat: %d samples, max %d ns, %d gaps examined checked"
          % (len(want), top, sum(c["examined"] for c in doc["cpus"])))


if __name__ == "__main__":
    main()
