#!/usr/bin/env python3
"""What rteval's cyclictest measurement module reads from cyclictest's output, re-expressed.

rteval (rteval/modules/measurement/cyclictest.py, GPL-2.0-or-later) runs
`cyclictest -i100 -qmu '-h 3500' -p95 -tN -aCPUS`, stops it with SIGINT and reads its standard
output: a '#' line is skipped unless it is '# Break value: ' (the -b value) or
'# Max Latencies: ' (one maximum per core); any other line whose first field is an integer is a
histogram row, `index count_core0 count_core1 ...`, added to each core's and the system's
buckets; a line that does not parse is logged as unexpected output and skipped. From the buckets
it derives samples, minimum, maximum, mean, median, mode, range, mean absolute deviation and
standard deviation per core and for the system, and refuses the statistics when the maximum is
above the histogram's width. This script does the same from its own code (the test reads its
JSON) so both tools' outputs can be fed to the same reader.

Usage: rteval_cyclictest_parse.py OUTPUT_FILE NUM_CORES BUCKETS
"""
import json
import math
import sys


class Core:
    def __init__(self):
        self.buckets = {}
        self.samples = 0
        self.minimum = None
        self.maximum = 0

    def add(self, index, count):
        self.buckets[index] = self.buckets.get(index, 0) + count
        if count:
            self.maximum = max(self.maximum, index)
            self.minimum = index if self.minimum is None else min(self.minimum, index)
        self.samples += count

    def stats(self):
        out = {"samples": self.samples, "min": self.minimum, "max": self.maximum}
        if self.samples <= 1:
            return out
        keys = sorted(self.buckets)
        total = sum(i * self.buckets[i] for i in keys)
        mean = total / self.samples
        # The median by rteval's rule: the bucket holding sample number samples/2 + 1.
        mid = self.samples // 2 + 1
        seen = 0
        median = None
        for i in keys:
            if median is None and seen < mid <= seen + self.buckets[i]:
                median = i
            seen += self.buckets[i]
        mode = max(keys, key=lambda i: (self.buckets[i], -i))
        mad = sum(abs(i - mean) * self.buckets[i] for i in keys) / self.samples
        var = sum((i - mean) ** 2 * self.buckets[i] for i in keys) / (self.samples - 1)
        out.update(mean=mean, median=median, mode=mode, mad=mad, stddev=math.sqrt(var))
        return out


def main():
    path, cores, width = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    per_core = [Core() for _ in range(cores)]
    system = Core()
    unexpected = []
    break_value = None
    max_line = None
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode()
            if line.startswith("#"):
                if line.startswith("# Break value: "):
                    break_value = int(line.split(":")[1])
                elif line.startswith("# Max Latencies: "):
                    max_line = [int(v) for v in line.split(":")[1].split()]
                continue
            fields = line.split()
            if not fields:
                continue
            try:
                index = int(fields[0])
                counts = [int(fields[i + 1]) for i in range(cores)]
            except (ValueError, IndexError):
                unexpected.append(line.rstrip("\n"))
                continue
            for core, count in zip(per_core, counts):
                core.add(index, count)
                system.add(index, count)
    if max_line is not None:
        for core, value in zip(per_core, max_line):
            core.maximum = max(core.maximum, value)
            system.maximum = max(system.maximum, value)
    json.dump({"cores": [c.stats() for c in per_core], "system": system.stats(),
               "max_latencies_line": max_line, "break_value": break_value,
               "unexpected": unexpected, "over_width": system.maximum > width}, sys.stdout)


if __name__ == "__main__":
    main()
