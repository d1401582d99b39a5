#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/histogram.h"
#include "results/latency_result.h"

namespace rtpulse::results {

/// Values of one cyclictest status line ("T: 0 ( 1234) P:80 I:1000 C: ...").
struct StatusLine {
  int index = 0;
  int tid = 0;
  int priority = 0;
  int64_t interval_us = 0;
  uint64_t cycles = 0;
  int64_t min = 0;  ///< In the output unit (us, or ns with -N).
  int64_t act = 0;
  int64_t avg = 0;
  int64_t max = 0;
  std::optional<uint64_t> smi;  ///< --smi: cyclictest's "SMI:" field.
};

/// Formats a status line exactly as cyclictest 2.x prints it (ns widths with -N).
std::string FormatStatusLine(const StatusLine& line, bool nsecs);

/// cyclictest's "current status" block (SIGUSR1, SIGUSR2) around `lines`, its status lines.
std::string CurrentStatusBlock(const std::vector<std::string>& lines);

/// The status line of a finished probe.
StatusLine StatusOf(const ProbeResult& probe, bool nsecs);

/// rtpulse's status line: cyclictest's, then " P99:<p99> Miss:<missed activations>" (p99 in
/// the output unit). The live view prints it while running and `rtpulse latency` at the end;
/// parsers of cyclictest's line read up to Max and ignore the rest.
std::string FormatStatusLineWithTail(const StatusLine& line, bool nsecs, int64_t p99,
                                     uint64_t missed);

/// `text` with "# " before every line ("#" alone on an empty one), so cyclictest-style
/// parsers skip rtpulse's own table in script mode (-q, -v, -h).
std::string CommentedLines(const std::string& text);

/// The final rtpulse status line of a probe: p99 from its histogram (nearest rank, bucket
/// upper edge), or `exact_p99_ns` when the samples log gave it; Miss its missed activations.
std::string FinalStatusLine(const ProbeResult& probe, bool nsecs,
                            std::optional<int64_t> exact_p99_ns = std::nullopt);
/// The exact p99 of `path.probes[index]` from its samples log, if the path has one.
std::optional<int64_t> ExactP99(const PathRun& path, size_t index);

/// "# injected 20, detected 20 (>= 1.50 ms) on T0": --inject's ground truth against what
/// the probe measured.
std::string FormatInjectionLine(const ProbeResult& probe, const InjectSettings& inject);

/// cyclictest's -h/-H text block ("# Histogram", rows, "# Total:", "# Min Latencies:", ...,
/// "# Histogram Overflow at cycle number:"), byte for byte, for the probes of one path.
/// Adds "# rtpulse: ..." lines only when there is something cyclictest would hide
/// (negative latencies).
std::string FormatHistogramBlock(const PathRun& path, bool with_sum, bool nsecs);

/// The whole run as cyclictest --json writes it (file_version 1, sysinfo, thread.N.*),
/// plus rtpulse's fields beside them (documented in docs/latency-json.md).
nlohmann::json ToJson(const LatencyRun& run, bool nsecs);

/// Sparse serialisation of a log-linear histogram: [[lo_ns, hi_ns, count], ...].
nlohmann::json HistogramToJson(const Histogram& histogram);

/// rtpulse's own summary table: one row per thread and an all-threads row per path,
/// with percentiles and missed periods, plus the method statement.
std::string FormatSummary(const LatencyRun& run);

/// When `unknown` activations may have missed too: `misses_unknown` and
/// `missed_activations_is_lower_bound` into `j` (nothing when every miss is known).
void AddMissesUnknown(nlohmann::json& j, uint64_t unknown);
/// "missed/skipped" as the tables print it: "3/0", ">=3/0" (the miss count a lower bound when
/// `unknown` activations may have missed too) or "not counted".
std::string MissedSkippedText(uint64_t missed, uint64_t skipped, uint64_t unknown,
                              bool not_counted);

/// Formats nanoseconds for humans: "812 ns", "12.4 us", "3.05 ms", "1.20 s".
std::string HumanNs(double ns);

}  // namespace rtpulse::results
