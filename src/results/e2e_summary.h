#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "results/e2e_sweep.h"

// `rtpulse e2e --json`'s run summary (docs/e2e.md, "The run summary"): per scenario the frames,
// the Total's p50, p99 and max, the misses, drops and throughput; a sweep's recommendation;
// what was not measured; the figures' notes; the results folder and the run's status. Built
// from the run by suite::E2eSummaryOf, written by `rtpulse e2e`, read back by
// E2eSummaryFromJson.
namespace rtpulse::results {

/// One scenario's line of the summary.
struct E2eSummaryRow {
  std::string scenario;
  std::string configuration;  ///< e.g. "threads 2, loaded (cpu:2)".
  int threads = 1;
  bool loaded = false;
  uint64_t frames = 0;       ///< Frames recorded.
  uint64_t total_count = 0;  ///< Frames with a Total (every recorded frame that has all stamps).
  /// Nearest-rank over the Totals; null without a frame.
  std::optional<int64_t> p50_total_ns, p99_total_ns, max_total_ns;
  std::optional<uint64_t> misses;  ///< Frames above --deadline; null without one.
  uint64_t dropped = 0;
  uint64_t lost = 0;
  std::optional<double> throughput_fps;  ///< null below 2 frames.
  bool interrupted = false;
  bool source_ran_out = false;  ///< A finite source ended before --frames.
  std::string backend;
};

/// A scenario the run started but never measured (interrupted while its loads settled).
struct E2eNotMeasured {
  std::string scenario;
  std::string why;
};

struct E2eSummary {
  std::vector<E2eSummaryRow> scenarios;
  /// --sweep threads only (absent otherwise).
  std::optional<std::vector<SweepRecommendation>> recommendation;
  std::vector<E2eNotMeasured> not_measured;
  std::vector<std::string> figure_notes;
  std::string results;  ///< The results folder.
  std::string status;   ///< result.json's status of the run.
};

nlohmann::json ToJson(const E2eSummary& summary);
/// A parsed summary; a missing or mistyped field is a usage error that names it.
Expected<E2eSummary> E2eSummaryFromJson(const nlohmann::json& doc);

}  // namespace rtpulse::results
