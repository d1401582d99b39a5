// node_exporter's textfile collector: a batch run (`latency`, `suite`) leaves its metrics in
// DIR/rtpulse.prom, rewritten atomically at each checkpoint and at the end, so the collector
// never reads half a file (docs/fleet.md#batch-runs).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "export/exposition.h"
#include "results/latency_result.h"
#include "results/suite_result.h"

namespace rtpulse::exporter {

inline constexpr std::string_view kTextfileName = "rtpulse.prom";

/// What the file says about the run itself.
struct RunInfo {
  std::string command;  ///< "latency", "suite".
  std::string status;   ///< "running", "complete", "interrupted", "failed".
  double start_unix_s = 0;
  double updated_unix_s = 0;
};

/// Appends rtpulse_run_info{command, status} 1, rtpulse_run_start_timestamp_seconds and
/// rtpulse_run_last_update_timestamp_seconds (so an alert can tell a stale file).
void AppendRunInfo(const RunInfo& run, std::vector<MetricFamily>& out);

/// A `latency` run's file: rtpulse_run_*, rtpulse_system_info (version, kernel release,
/// preemption model) and the latency families (latency_metrics.h) of every probe of every
/// wake path in `run.paths`.
std::vector<MetricFamily> LatencyRunFamilies(const results::LatencyRun& run, const RunInfo& info);

/// Writes a finished `latency` run's file (LatencyRunFamilies: "interrupted" or "complete",
/// updated now) to dir/rtpulse.prom.
Status WriteLatencyRunTextfile(const std::string& dir, const results::LatencyRun& run);

/// A `suite` run's file: as above for every scenario that has measured (or checkpointed)
/// something, each series labelled scenario="NAME" first; the status, start and update time
/// from `suite` (command "suite").
std::vector<MetricFamily> SuiteRunFamilies(const results::SuiteResult& suite);

/// Checks before a run that `dir` is a folder this process can write rtpulse.prom in (usage
/// error for a missing folder, resource error for one it may not write).
Status CheckTextfileDir(const std::string& dir);

/// Writes `families` in the text format to dir/rtpulse.prom atomically (a temporary name
/// that does not end in .prom, then a rename).
Status WriteTextfile(const std::string& dir, const std::vector<MetricFamily>& families);

}  // namespace rtpulse::exporter
