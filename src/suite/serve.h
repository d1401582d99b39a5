// `rtpulse serve`: the latency engine run without end on every selected CPU, the monitor
// beside it, and a read-only /metrics endpoint for Prometheus (docs/fleet.md). The runner of
// a continuous measurement, as RunSuite is of a list of scenarios.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "export/http_server.h"
#include "export/machine_metrics.h"
#include "measure/plan.h"
#include "monitor/sampler.h"
#include "results/latency_result.h"

namespace rtpulse::suite {

struct ServePlan {
  /// One wake path, pinned probes; duration_ns 0 runs until SIGINT/SIGTERM.
  measure::LatencyPlan latency;
  exporter::HttpServerOptions http;
  /// How often the probes' histograms are copied for the scrapes: a scrape sees the
  /// measurement at most this old (rtpulse_serve_snapshot_timestamp_seconds says when).
  int64_t refresh_ns = 1'000'000'000;
};

/// What serve says about the machine, gathered once before it starts.
struct ServeMachine {
  exporter::Labels system_labels;  ///< rtpulse_system_info's labels.
  std::vector<exporter::CheckState> checks;
  double checks_ran_unix_s = 0;
  std::vector<std::string> warnings;  ///< Environment and planning warnings (rtpulse_warning).
  /// The monitor (SCHED_IDLE, no CSV), started and stopped by RunServe; may be null.
  std::unique_ptr<monitor::Sampler> monitor;
};

/// The CPUs for the server's thread (HttpServerOptions::cpus): the online CPUs without a
/// probe, or the first online CPU when every one has a probe (at SCHED_OTHER it still yields
/// to them).
std::vector<int> ServerCpus(const measure::LatencyPlan& plan, const std::vector<int>& online);

/// What a serve run measured, for its closing lines and --json.
struct ServeOutcome {
  results::LatencyRun run;
  exporter::HttpServerStats http;
  uint64_t snapshots = 0;  ///< Histogram copies published to the scrapes.
};

/// The families a scrape returns, from the latest snapshot (null before the first one: the
/// latency families are described, with no series yet). Pure: the tests and RunServe share it.
std::vector<exporter::MetricFamily> ServeFamilies(const results::PathRun* snapshot,
                                                  double snapshot_unix_s, bool injecting,
                                                  const ServeMachine& machine,
                                                  const std::vector<std::string>& monitor_columns,
                                                  const std::vector<double>& monitor_values);

/// Binds the server (a port in use is a usage error before anything runs), starts the
/// monitor, calls `listening(authority)`, then measures until SIGINT/SIGTERM (blocked by the
/// caller: measure::BlockRunSignals) or the plan's duration, publishing a snapshot every
/// refresh. The server and the monitor are stopped before it returns, whatever happened.
Expected<ServeOutcome> RunServe(const ServePlan& plan, ServeMachine machine,
                                const std::function<void(const std::string&)>& listening);

}  // namespace rtpulse::suite
