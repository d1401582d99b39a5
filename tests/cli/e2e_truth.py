#!/usr/bin/env python3
"""Ground truth for an `rtpulse e2e` results folder, without rtpulse.

usage: e2e_truth.py RUN_DIR [--stdout FILE] [--csv FILE] [--json FILE]

For every scenario folder of RUN_DIR/result.json it reads frames.csv (the raw per-frame
timestamps) and recomputes, in integers or exact fractions:
  - frames.csv's derived columns (Capture = read_end - capture, Queue = infer_start - read_end,
    Preproc = pre_end - infer_start, Inference = inference_end - pre_end, Postproc = post_end -
    inference_end, DecisionToAlert = alert - post_end, Total = alert - capture);
  - every line of e2e_inference_latency.csv (ms, 6 decimals, exact);
  - every number of e2e_statistics.txt: per stage count, mean, std (population), min, p50,
    p90, p99 (nearest rank), max; throughput; frames, dropped, lost, misses;
  - e2e.json's counts and stages; samples.bin's records (expected = capture, actual = alert);
  - result.json's latency: sample count and exact percentiles of Total;
  - misses against the deadline e2e.json states (miss == Total > deadline);
  - with --stdout, the summary table's p50/p99/max per scenario and, for a sweep, the
    recommendation (the thread count with the lowest p99 Total; ties: fewer threads).
Prints "OK <n> scenarios" or the first mismatch (exit 1).
"""
import argparse
import csv
import json
import math
import os
import re
import struct
import sys
from fractions import Fraction
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from samples_reader import read_samples  # noqa: E402  (versions 1 and 2, docs only)

STAGES = ["Capture", "Queue", "Preproc", "Inference", "Postproc", "DecisionToAlert"]
FIELDS = ["index", "source_seq", "release_ns", "capture_ns", "read_end_ns", "infer_start_ns",
          "pre_end_ns", "inference_end_ns", "post_end_ns", "alert_ns", "edge_ns",
          "dropped_before", "lost_before", "obstacle", "changed", "miss", "roi_depth_m"]
DERIVED = ["capture_stage_ns", "queue_ns", "preproc_ns", "inference_ns", "postproc_ns",
           "decision_to_alert_ns", "total_ns"]


EXACT_METHOD = ("nearest-rank (rank = ceil(p/100*N)); value = the sample of that rank, exact "
                "(from the samples log)")


def fail(msg):
    print("MISMATCH: " + msg)
    sys.exit(1)


def ms(ns):
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000000}.{ns % 1000000:06d}"


def min_count(p):
    """The fewest values whose nearest-rank p-th percentile is not the maximum (below it the
    command prints n/a): rank ceil(p/100 n) < n."""
    n = 1
    while math.ceil(Fraction(p) / 100 * n) >= n:
        n += 1
    return n


def pct_text(v, p):
    return "n/a" if len(v) < min_count(p) else ms(rank(v, p))


def rank(sorted_values, p):
    n = len(sorted_values)
    r = math.ceil(Fraction(p) / 100 * n)
    return sorted_values[max(1, r) - 1]


def stages_of(f):
    return {
        "Capture": f["read_end_ns"] - f["capture_ns"],
        "Queue": f["infer_start_ns"] - f["read_end_ns"],
        "Preproc": f["pre_end_ns"] - f["infer_start_ns"],
        "Inference": f["inference_end_ns"] - f["pre_end_ns"],
        "Postproc": f["post_end_ns"] - f["inference_end_ns"],
        "DecisionToAlert": f["alert_ns"] - f["post_end_ns"],
        "Total": f["alert_ns"] - f["capture_ns"],
    }


def read_frames(path):
    with open(path) as fh:
        rows = list(csv.reader(fh))
    if rows[0] != FIELDS + DERIVED:
        fail(f"{path}: header {rows[0]}")
    frames = []
    for line in rows[1:]:
        # roi_depth_m: metres, or empty when the frame's ROI depth is not known.
        f = {k: ((float(v) if v != "" else None) if k == "roi_depth_m" else int(v))
             for k, v in zip(FIELDS, line)}
        s = stages_of(f)
        got = [int(v) for v in line[len(FIELDS):]]
        want = [s[k] for k in STAGES] + [s["Total"]]
        if got != want:
            fail(f"{path}: frame {f['index']} derived {got} != {want}")
        # Capture and Total start at the source's stamp, which may lie after the read.
        if any(v < 0 for v in want[1:6]):
            fail(f"{path}: frame {f['index']} has a negative stage {want}")
        if sum(want[:6]) != want[6]:
            fail(f"{path}: frame {f['index']} stages do not add up to Total")
        f["stages"] = s
        frames.append(f)
    return frames


def check_latency_csv(path, frames):
    with open(path) as fh:
        lines = fh.read().splitlines()
    if lines[0] != "Sample,Total,Preproc,Inference,Postproc,Capture,DecisionToAlert":
        fail(f"{path}: header {lines[0]}")
    if len(lines) - 1 != len(frames):
        fail(f"{path}: {len(lines) - 1} rows for {len(frames)} frames")
    for i, (line, f) in enumerate(zip(lines[1:], frames)):
        s = f["stages"]
        want = ",".join([str(i + 1)] + [ms(s[k]) for k in
                                        ["Total", "Preproc", "Inference", "Postproc", "Capture",
                                         "DecisionToAlert"]])
        if line != want:
            fail(f"{path}:{i + 2}: '{line}' != '{want}'")


def stats(values):
    v = sorted(values)
    n = len(v)
    mean = Fraction(sum(v), n)
    var = sum((Fraction(x) - mean) ** 2 for x in v) / n
    return {"count": n, "mean": mean, "std": math.sqrt(var), "min": v[0], "max": v[-1],
            "p50": rank(v, 50), "p90": rank(v, 90), "p99": rank(v, 99)}


def parse_ms(text):
    sign = -1 if text.startswith("-") else 1
    whole, frac = text.lstrip("-").split(".")
    return sign * (int(whole) * 1000000 + int(frac))


def check_statistics(path, frames, doc):
    text = open(path).read()
    values = {k: [f["stages"][k] for f in frames] for k in STAGES + ["Total"]}
    values["DecisionToEdge"] = [f["edge_ns"] - f["post_end_ns"] for f in frames
                                if f["edge_ns"] >= 0]
    for name in ["Total"] + STAGES + ["DecisionToEdge"]:
        m = re.search(rf"^{name}\s+(.*)$", text, re.M)
        if not m:
            fail(f"{path}: no line for {name}")
        cells = m.group(1).split()
        if not values[name]:
            if not cells[0].startswith("n/a"):
                fail(f"{path}: {name} should be n/a: {cells}")
            continue
        s = stats(values[name])
        if int(cells[0]) != s["count"]:
            fail(f"{path}: {name} count {cells[0]} != {s['count']}")
        # p90 and p99 are n/a below the count they need (10 and 100 frames): then they would
        # be the maximum.
        v = sorted(values[name])
        want_cells = [ms(s["min"]), ms(s["p50"]), pct_text(v, 90), pct_text(v, 99), ms(s["max"])]
        if cells[3:] != want_cells:
            fail(f"{path}: {name} min..max {cells[3:]} != {want_cells}")
        got = [parse_ms(c) for c in cells[1:3]]
        if abs(got[0] - s["mean"]) > Fraction(1, 2) + Fraction(1, 10**6):
            fail(f"{path}: {name} mean {got[0]} != {float(s['mean'])}")
        if abs(got[1] - s["std"]) > 0.5 + 1e-3 * max(1.0, s["std"]) * 1e-3:
            fail(f"{path}: {name} std {got[1]} != {s['std']}")
        j = doc["stages"][name]
        for key, want in [("count", s["count"]), ("min_ns", s["min"]), ("p50_ns", s["p50"]),
                          ("p90_ns", s["p90"]), ("p99_ns", s["p99"]), ("max_ns", s["max"])]:
            if j[key] != want:
                fail(f"e2e.json stages.{name}.{key} {j[key]} != {want}")
    n = len(frames)
    counts = doc["counts"]
    dropped = sum(f["dropped_before"] for f in frames)
    lost = sum(f["lost_before"] for f in frames)
    misses = sum(f["miss"] for f in frames)
    expect = {
        "Frames": rf"Frames: {n} recorded, {counts['released']} released",
        "Dropped": rf"Dropped: {dropped} \(released, never processed; 0 after",
        "Lost": rf"Lost: {lost} ",
        "Misses": rf"Misses: {misses} " if doc["settings"]["deadline_ns"] > 0
        else r"Misses: not counted \(no deadline",
    }
    for what, pattern in expect.items():
        if not re.search(pattern, text):
            fail(f"{path}: {what} line does not match /{pattern}/")
    if counts["frames"] != n or counts["dropped"] != dropped or counts["misses"] != misses:
        fail(f"e2e.json counts {counts} != frames {n} dropped {dropped} misses {misses}")
    if counts["released"] - n != dropped:
        fail(f"released {counts['released']} - frames {n} != dropped {dropped}")
    # Throughput: the intervals between the first and the last frame's alerts (frames.csv).
    m = re.search(r"Throughput: ([0-9.]+) frames/s \((\d+) intervals between the (\d+) "
                  r"frames' alerts in (\d+) ns\)", text)
    if n > 1:
        if not m:
            fail(f"{path}: no throughput line")
        span = frames[-1]["alert_ns"] - frames[0]["alert_ns"]
        if int(m.group(2)) != n - 1 or int(m.group(3)) != n or int(m.group(4)) != span:
            fail(f"{path}: throughput basis {m.groups()} != {n - 1}, {n}, {span}")
        want = (n - 1) * 1e9 / span
        if abs(float(m.group(1)) - want) > 0.0005 + 1e-9 * want:
            fail(f"{path}: throughput {m.group(1)} != {want:.3f}")
        if abs(counts["throughput_fps"] - want) > 1e-6 * want:
            fail(f"e2e.json throughput_fps {counts['throughput_fps']} != {want}")
    elif "Throughput: n/a" not in text:
        fail(f"{path}: throughput of {n} frame(s) should be n/a")
    if doc["settings"]["mode"] == "periodic" and doc["settings"]["fps"] > 0:
        # Releases on the grid: two processed frames are (dropped_before + 1) periods apart.
        period = Fraction(10**9) / Fraction(doc["settings"]["fps"]).limit_denominator(10**6)
        for prev, f in zip(frames, frames[1:]):
            want = (f["dropped_before"] + 1) * period
            if abs(f["release_ns"] - prev["release_ns"] - want) > f["dropped_before"] + 2:
                fail(f"frame {f['index']}: release gap {f['release_ns'] - prev['release_ns']} "
                     f"is not (dropped_before {f['dropped_before']} + 1) periods")
    after = sum(1 for f in frames if f["capture_ns"] > f["read_end_ns"])
    if after and not re.search(rf"Capture stamps after the read's end: {after} frames", text):
        fail(f"{path}: {after} frames stamped after their read, not said")
    if not after and "Capture stamps after" in text:
        fail(f"{path}: says frames were stamped after their read; none was")
    deadline = doc["settings"]["deadline_ns"]
    for f in frames:
        want = deadline > 0 and f["stages"]["Total"] > deadline
        if bool(f["miss"]) != want:
            fail(f"frame {f['index']}: miss {f['miss']} with Total {f['stages']['Total']} and "
                 f"deadline {deadline}")


def check_samples(path, frames):
    try:
        records, _ = read_samples(path)
    except ValueError:
        fail(f"{path}: not a samples file")
    n = len(records)
    if n != len(frames):
        fail(f"{path}: {n} records for {len(frames)} frames")
    for i, f in enumerate(frames):
        _seq, expected, actual, *_ = records[i]
        if expected != f["capture_ns"] or actual != f["alert_ns"]:
            fail(f"{path}: record {i} ({expected}, {actual}) is not frame {f['index']}")


def check_figure(run, per_scenario):
    """figures/e2e_stages.dat: per scenario 4 bars (p50, p90, p99, max), each series the
    cumulative sum of the stages' own statistic up to that stage (%.10g of ms)."""
    path = os.path.join(run, "figures", "e2e_stages.dat")
    blocks = {}
    current = None
    for line in open(path):
        m = re.match(r"# index \d+: (\w+)", line)
        if m:
            current = blocks.setdefault(m.group(1), [])
        elif line.strip() and not line.startswith("#"):
            x, y = line.split()
            current.append((int(float(x)), float(y)))
    x = 0
    for frames in per_scenario:
        if not frames:
            continue
        for p in (50, 90, 99, 100):
            top = 0
            for stage in STAGES:
                v = sorted(f["stages"][stage] for f in frames)
                top += v[-1] if p == 100 else rank(v, p)
                got = dict(blocks[stage])[x]
                if abs(got - top / 1e6) > 1e-9 * max(1.0, top / 1e6):
                    fail(f"{path}: {stage} bar {x} at {got} ms, recomputed {top / 1e6}")
            x += 1
    if any(len(b) != x for b in blocks.values()):
        fail(f"{path}: {[len(b) for b in blocks.values()]} bars, expected {x}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--stdout")
    ap.add_argument("--csv")
    ap.add_argument("--json")
    a = ap.parse_args()
    result = json.load(open(os.path.join(a.run, "result.json")))
    p99 = {}
    totals = {}
    first = None
    per_scenario = []
    for sc in result["scenarios"]:
        d = os.path.join(a.run, sc["name"])
        frames = read_frames(os.path.join(d, "frames.csv"))
        first = first if first is not None else frames
        per_scenario.append(frames)
        doc = json.load(open(os.path.join(d, "e2e.json")))
        check_latency_csv(os.path.join(d, "e2e_inference_latency.csv"), frames)
        check_statistics(os.path.join(d, "e2e_statistics.txt"), frames, doc)
        check_samples(os.path.join(d, "samples.bin"), frames)
        t = sorted(f["stages"]["Total"] for f in frames)
        totals[sc["name"]] = t
        if t:
            p99[sc["name"]] = (doc["backend"]["threads_asked"], sc["name"].endswith("loaded"),
                               rank(t, 99))
            ex = sc.get("exact_percentiles")
            if not ex or ex["p99_ns"] != rank(t, 99) or ex["median_ns"] != rank(t, 50):
                fail(f"result.json {sc['name']} exact_percentiles {ex} != p99 {rank(t, 99)}")
            # The scenario's cyclictest.json: every percentile the sample of its rank, as
            # result.json's (the frames' times are all known), never a bucket edge.
            ct = json.load(open(os.path.join(d, "cyclictest.json")))["rtpulse"]
            if ct["percentile_method"] != EXACT_METHOD:
                fail(f"{sc['name']}/cyclictest.json percentile_method {ct['percentile_method']!r}")
            all_threads = ct["paths"][0]["all_threads"]
            for p in ("50", "90", "99", "99.9", "99.99", "99.999"):
                if all_threads[f"p{p}_ns"] != rank(t, p):
                    fail(f"{sc['name']}/cyclictest.json p{p} {all_threads[f'p{p}_ns']} != "
                         f"{rank(t, p)}")
            summary = sc["summary"][0]
            if summary["samples"] != len(t) or summary["max_ns"] != t[-1]:
                fail(f"result.json {sc['name']} summary {summary['samples']} samples, max "
                     f"{summary['max_ns']} != {len(t)}, {t[-1]}")
    if os.path.exists(os.path.join(a.run, "figures", "e2e_stages.dat")):
        check_figure(a.run, per_scenario)
    elif any(per_scenario):
        fail("no figures/e2e_stages.dat although frames were recorded")
    if a.csv:
        check_latency_csv(a.csv, first)
    if a.stdout:
        out = open(a.stdout).read()
        for name, t in totals.items():
            if not t:
                continue
            p99_cell = pct_text(t, 99)
            p99_cell = re.escape(p99_cell) if p99_cell == "n/a" else p99_cell + " ms"
            want = rf"^{re.escape(name)}\s+{len(t)}\s+{ms(rank(t, 50))} ms\s+{p99_cell}" \
                   rf"\s+{ms(t[-1])} ms"
            if not re.search(want, out, re.M):
                fail(f"summary line of {name} does not match /{want}/")
        for loaded in (False, True):
            group = [(threads, v) for threads, ld, v in p99.values() if ld == loaded]
            if len(group) < 2:
                continue
            best = min(group, key=lambda tv: (tv[1], tv[0]))
            m = re.search(rf"^recommendation{' under load' if loaded else ''}: (\d+) inference "
                          rf"thread", out, re.M)
            if not m or int(m.group(1)) != best[0]:
                fail(f"recommendation {m.group(1) if m else None} != {best[0]} from {group}")
            sweep = json.load(open(os.path.join(a.run, "sweep.json")))
            rec = [r for r in sweep["recommendation"] if r["loaded"] == loaded][0]
            if rec["threads"] != best[0] or rec["p99_total_ns"] != best[1]:
                fail(f"sweep.json {rec} != {best}")
            for threads, v in group:
                if rec["p99_total_ns_by_threads"][str(threads)] != v:
                    fail(f"sweep.json p99 of {threads} threads != {v}")
    if a.json:
        doc = json.load(open(a.json))
        for s in doc["scenarios"]:
            t = totals[s["scenario"]]
            if t and (s["p99_total_ns"] != rank(t, 99) or s["frames"] != len(t)
                      or s["p50_total_ns"] != rank(t, 50) or s["max_total_ns"] != max(t)
                      or s["total_count"] != len(t)):
                fail(f"--json {s['scenario']}: {s}")
    print(f"OK {len(result['scenarios'])} scenarios")


if __name__ == "__main__":
    main()
