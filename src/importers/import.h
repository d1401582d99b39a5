#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "results/latency_result.h"
#include "results/suite_result.h"

namespace rtpulse::importers {

/// The other tools' outputs `rtpulse import` reads (docs/import.md).
enum class Format {
  kCyclictestJson,       ///< cyclictest --json (file_version 1)
  kCyclictestHistogram,  ///< cyclictest -h/-H text block
  kCyclictestVerbose,    ///< cyclictest -v lines "thread:loop:latency_us"
  kJitterdebuggerJson,   ///< jitterdebugger's results.json
  kJitterdebuggerRaw,    ///< jitterdebugger -s samples.raw (28-byte records)
  kRtApp,                ///< rt-app per-thread log (wu_lat column)
  kValues,               ///< one value per line
};

const char* FormatName(Format format);
std::optional<Format> FormatFromName(const std::string& name);
std::vector<std::string> FormatNames();
/// The format keeps the samples in the order they were taken, so an import can stream them
/// into a samples log (the format table's row says it).
bool FormatKeepsOrder(Format format);

/// Guesses the format from the file's first 64 KiB. Errors name the file and the fix
/// (--format NAME).
Expected<Format> DetectFormat(const std::string& path);

/// One time-ordered sample, for formats that keep the order (written as samples.bin).
struct TimedSample {
  uint16_t thread = 0;
  uint16_t cpu = 0xFFFF;
  uint64_t seq = 0;
  int64_t expected_ns = 0;
  int64_t latency_ns = 0;
};

/// Receives the time-ordered samples while a file is read (streaming: nothing is kept).
class SampleConsumer {
 public:
  virtual ~SampleConsumer() = default;
  virtual void Add(const TimedSample& sample) = 0;
  /// `n` samples of a source without deadlines or threads (one value per line): sample i is
  /// TimedSample{0, 0xFFFF, first_seq + i, 0, latency_ns[i]}. The default calls Add() for
  /// each; a consumer may take the run at once (the values importer's hot path).
  virtual void AddLatencies(const int64_t* latency_ns, size_t n, uint64_t first_seq) {
    for (size_t i = 0; i < n; ++i) Add(TimedSample{0, 0xFFFF, first_seq + i, 0, latency_ns[i]});
  }
};

struct ImportOptions {
  std::optional<Format> format;  ///< Forced with --format; detected otherwise.
  int64_t unit_ns = 1000;        ///< Unit of one-value-per-line files (--unit).
  /// Threads that parse a large one-value-per-line file in parallel when no samples are
  /// streamed (--jobs): 0 = one per online CPU, at most 4; 1 = never.
  int threads = 0;
  /// Files smaller than this are parsed on one thread: below it the threads cost more than
  /// they save. Tests lower it to split small files.
  uint64_t parallel_min_bytes = uint64_t{16} << 20;
};

/// What one file held.
struct Imported {
  Format format = Format::kValues;
  std::vector<results::ProbeResult> probes;  ///< One per thread/CPU of the source.
  /// False when the source has no distribution (cyclictest --json without -h): the probes
  /// are then empty and `source_numbers` holds what the tool printed.
  bool has_distribution = true;
  bool time_ordered = false;          ///< The format keeps sample order (samples were streamed).
  std::vector<std::string> warnings;  ///< Plain statements: clipped overflows, units, ...
  nlohmann::json source_numbers = nlohmann::json::array();  ///< The tool's own per-thread numbers.
  uint64_t samples_streamed = 0;
  /// One-value-per-line files with a samples log: results::kSummaryPercentiles exactly, from
  /// the parse itself (nothing when it could not keep them: then the log is read back).
  std::optional<results::ExactPercentileValues> exact_percentiles;
  int parse_threads = 1;  ///< Threads that parsed the file (one-value-per-line files: up to 4).
};

/// Reads one file completely. `samples` (may be null) receives the samples of time-ordered
/// formats as they are read. Every malformed input is a UsageError "file:line:col: what; fix"
/// (JSON content errors name the field instead of a column).
Expected<Imported> ImportFile(const std::string& path, const ImportOptions& options,
                              SampleConsumer* samples);

}  // namespace rtpulse::importers
