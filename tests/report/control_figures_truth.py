#!/usr/bin/env python3
"""Independent truth for the control figures' data files (report/control_figures).

usage: control_figures_truth.py FIGURES_DIR SCENARIO,CONFIGURATION,STRESS(0|1),JOBS_CSV ...

From each configuration's jobs.csv (response = end_ns - release_ns) recomputes what
control_response_cdf.dat and control_response_boxes.dat must hold, number for number
('%.10g', as the figures write them), and compares. Exit 0 and "ok" when both match.
"""
import csv
import sys


def responses(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return sorted(int(r["end_ns"]) - int(r["release_ns"]) for r in rows)


def g(v):
    return "%.10g" % v


def rank_value(sorted_ns, p):
    n = len(sorted_ns)
    return sorted_ns[max(1, -(-p * n // 100)) - 1]  # nearest rank ceil(p n / 100), exact


def blocks(path):
    """The numeric lines of each '# index' block of a .dat file."""
    out = []
    for line in open(path).read().splitlines():
        if line.startswith("# index "):
            out.append([])
        elif line and not line.startswith("#"):
            out[-1].append(line)
    return out


def main():
    figures = sys.argv[1]
    inputs = []
    for arg in sys.argv[2:]:
        scenario, configuration, stress, jobs = arg.split(",")
        inputs.append((scenario, configuration, stress == "1", responses(jobs)))

    cdf = []
    for _, _, _, ns in inputs:
        if not ns:
            continue
        n = len(ns)
        lines = []
        for i, v in enumerate(ns):
            if i > 0 and v == ns[i - 1]:
                continue
            lines.append("%s %s" % (g(v / 1000), g((n - i) / n)))
        cdf.append(lines)

    categories = []
    for _, configuration, _, _ in inputs:
        if configuration not in categories:
            categories.append(configuration)
    boxes = []
    for stress in (False, True):
        present = [x for x in inputs if x[2] == stress]
        if not present:
            continue
        lines = []
        for k, configuration in enumerate(categories):
            for _, c, _, ns in present:
                if c != configuration or not ns:
                    continue
                values = [ns[0], rank_value(ns, 25), rank_value(ns, 50), rank_value(ns, 75),
                          rank_value(ns, 99), ns[-1]]
                lines.append(" ".join([g(k)] + [g(v / 1000) for v in values]))
        boxes.append(lines)

    ok = True
    for name, want in (("control_response_cdf", cdf), ("control_response_boxes", boxes)):
        have = blocks("%s/%s.dat" % (figures, name))
        if have != want:
            ok = False
            print("%s.dat differs: %d blocks, expected %d" % (name, len(have), len(want)))
            for i, (h, w) in enumerate(zip(have, want)):
                for a, b in zip(h, w):
                    if a != b:
                        print("  block %d: file '%s', expected '%s'" % (i, a, b))
                        break
                if len(h) != len(w):
                    print("  block %d: %d lines, expected %d" % (i, len(h), len(w)))
    if not ok:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
