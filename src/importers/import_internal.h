#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/printable.h"
#include "importers/import.h"

namespace rtpulse::importers::internal {

/// "file:line:col: what; fix", a usage error (exit 2). `what` may quote the input as read:
/// its non-printable bytes are escaped (core/printable.h), so binary input never reaches the
/// terminal raw.
inline Error At(const std::string& file, uint64_t line, uint64_t col, std::string_view what,
                std::string_view fix) {
  return UsageError(
      fmt::format("{}:{}:{}: {}; {}", Printable(file), line, col, Printable(what), fix));
}

/// A probe as other tools describe a thread: index, CPU, and the wake path "import".
results::ProbeResult NewProbe(int index, int cpu);

/// What another tool's file says about one thread with a 1 us histogram (cyclictest,
/// jitterdebugger): the classes, and the samples outside them whose values are unknown.
struct ToolThread {
  std::vector<uint64_t> counts;  ///< counts[us]: samples of exactly us microseconds.
  int64_t limit_us = 0;          ///< The histogram's size: samples >= it are overflows.
  uint64_t overflows = 0;        ///< Samples >= limit_us, values unknown except the max.
  /// The largest overflow, when the tool's max says it (>= the limit).
  std::optional<int64_t> overflow_max_ns;
  uint64_t negatives = 0;        ///< Samples < 0 (cyclictest's wrap), values unknown except:
  int64_t negative_max_ns = -1;  ///< the largest of them; every negative is <= it.
  /// Samples outside the histogram known only to be either >= the limit or negative (the
  /// -h text of a run with wrapped values): counted at negative_max_ns; min, max, mean and
  /// jitter are then not known.
  uint64_t unknown_sign = 0;
  /// The mean of all samples as the tool gives it, when it does; `mean_bound` says how
  /// far it can be trusted (the -h text truncates it to whole us: a lower bound).
  std::optional<double> mean_ns;
  results::Bound mean_bound = results::Bound::kExact;
  std::string mean_reason;  ///< Why mean_bound is not exact.
  std::string where;        ///< "thread.0", "cpu.1": names the thread in the reasons.
};

/// Records a ToolThread into a probe: the classes at us*1000 ns, the overflows at the limit
/// (the largest at the tool's max when known), the negatives at the largest negative; sets
/// the moments and `probe.bounds`: every statistic the unknown values leave open is a bound
/// (the standard deviation the smallest spread the file allows), with the reason; keeps
/// the cyclictest-compatible linear histogram.
void RecordTool(results::ProbeResult& probe, const ToolThread& t);

Expected<Imported> ImportCyclictestJson(const std::string& path, const std::string& text);
Expected<Imported> ImportCyclictestHistogram(const std::string& path);
Expected<Imported> ImportCyclictestVerbose(const std::string& path, SampleConsumer* samples);
Expected<Imported> ImportJitterdebuggerJson(const std::string& path, const std::string& text);
Expected<Imported> ImportJitterdebuggerRaw(const std::string& path, SampleConsumer* samples);
Expected<Imported> ImportRtApp(const std::string& path);
/// `options.threads` and `options.parallel_min_bytes` are used only when `samples` is null.
Expected<Imported> ImportValues(const std::string& path, const ImportOptions& options,
                                SampleConsumer* samples);

/// Parses JSON text, or a "file:line:col" error from the parser's byte offset.
Expected<nlohmann::json> ParseJson(const std::string& path, const std::string& text);

/// One thread of cyclictest's or jitterdebugger's JSON: {"histogram": {"us": count},
/// <count_key>, min, max, avg}. `limit_us` 0 = unknown. Adds warnings and the tool's own
/// numbers to `out`; clears out.has_distribution when the histogram is empty.
/// `wrap_possible`: the tool stores latencies unsigned and its summary may hold wrapped
/// negative values (cyclictest 2.x); they are detected, counted and kept out of statistics.
Expected<results::ProbeResult> ProbeFromToolJson(const std::string& path, const std::string& text,
                                                 const std::string& where, const nlohmann::json& t,
                                                 const char* count_key, int index, int64_t limit_us,
                                                 int64_t unit_ns, bool wrap_possible,
                                                 Imported& out);

/// Reads a whole (small) file, or a usage error naming it.
Expected<std::string> ReadSmallFile(const std::string& path);

/// The blank-separated fields of a line, each with its 0-based column; views into `line`.
std::vector<std::pair<std::string_view, size_t>> Fields(std::string_view line);

/// Line and column (1-based) of a byte offset in `text`.
std::pair<uint64_t, uint64_t> LineCol(std::string_view text, size_t offset);

}  // namespace rtpulse::importers::internal
