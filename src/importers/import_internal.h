#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
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

/// Records cyclictest-style 1 us classes into a probe: `counts[us]` samples at us*1000 ns,
/// `overflows` samples at or above `limit_us` (the max at `max_us`, the rest clipped to the
/// limit), and rebuilds min/max/mean from the tool's own numbers.
void RecordLinear(results::ProbeResult& probe, const std::vector<uint64_t>& counts,
                  int64_t limit_us, uint64_t overflows, int64_t min_ns, int64_t max_ns,
                  double mean_ns);

Expected<Imported> ImportCyclictestJson(const std::string& path, const std::string& text);
Expected<Imported> ImportCyclictestHistogram(const std::string& path);
Expected<Imported> ImportCyclictestVerbose(const std::string& path, SampleConsumer* samples);
Expected<Imported> ImportJitterdebuggerJson(const std::string& path, const std::string& text);
Expected<Imported> ImportJitterdebuggerRaw(const std::string& path, SampleConsumer* samples);
Expected<Imported> ImportRtApp(const std::string& path);
/// `threads` as ImportOptions::threads; used only when `samples` is null.
Expected<Imported> ImportValues(const std::string& path, int64_t unit_ns, SampleConsumer* samples,
                                int threads);

/// Parses JSON text, or a "file:line:col" error from the parser's byte offset.
Expected<nlohmann::json> ParseJson(const std::string& path, const std::string& text);

/// One thread of cyclictest's or jitterdebugger's JSON: {"histogram": {"us": count},
/// <count_key>, min, max, avg}. `limit_us` 0 = unknown. Adds warnings and the tool's own
/// numbers to `out`; clears out.has_distribution when the histogram is empty.
Expected<results::ProbeResult> ProbeFromToolJson(const std::string& path, const std::string& text,
                                                 const std::string& where, const nlohmann::json& t,
                                                 const char* count_key, int index, int64_t limit_us,
                                                 int64_t unit_ns, Imported& out);

/// Reads a whole (small) file, or a usage error naming it.
Expected<std::string> ReadSmallFile(const std::string& path);

/// The blank-separated fields of a line, each with its 0-based column; views into `line`.
std::vector<std::pair<std::string_view, size_t>> Fields(std::string_view line);

/// Line and column (1-based) of a byte offset in `text`.
std::pair<uint64_t, uint64_t> LineCol(std::string_view text, size_t offset);

}  // namespace rtpulse::importers::internal
