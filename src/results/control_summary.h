#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "results/control_result.h"

// `rtpulse control --json`'s run summary (docs/control.md, "The run summary"): per
// configuration the summary table's row (jobs, skipped releases, misses, response and
// execution times), its releases and the control cost under the measured timing; the
// figures' notes; the results folder and the run's status. Written by `rtpulse control`, read
// back by ControlSummaryFromJson.
namespace rtpulse::results {

/// The control cost of a configuration (stats::ReplayResult's figures), as summarised.
struct ControlSummaryCost {
  /// null: no relative number (the ideal cost is 0, or the measured cost is not finite).
  std::optional<double> cost_increase_pct;
  std::optional<double> peak_error_rad;  ///< null: not finite (the loop was lost).
  int64_t worst_stall_ns = 0;
  bool outside_model = false;  ///< The timing drove the attitude beyond the model: "lost".
  std::string summary;         ///< The line the command printed.
};

struct ControlSummaryConfiguration {
  ControlSummaryRow row;  ///< The summary table's row.
  uint64_t releases = 0;
  bool interrupted = false;
  std::optional<ControlSummaryCost> cost;  ///< nullopt: not computed, `cost_error` says why.
  std::string cost_error;
};

struct ControlSummary {
  std::vector<ControlSummaryConfiguration> configurations;
  std::vector<std::string> figure_notes;
  std::string results;  ///< The results folder.
  std::string status;   ///< result.json's status of the run.
};

nlohmann::json ToJson(const ControlSummary& summary);
/// A parsed summary; a missing or mistyped field is a usage error that names it.
Expected<ControlSummary> ControlSummaryFromJson(const nlohmann::json& doc);

}  // namespace rtpulse::results
