#pragma once

// `rtpulse noise`'s plan and run (docs/noise.md): the options as typed (NoiseRequest), checked
// against the machine and turned into measure::NoisePlan; the run's record turned into its
// results type with the facts and warnings it must carry. Every refusal is a usage error
// naming the option and the fix; nothing is started or written while planning.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"
#include "measure/noise.h"
#include "results/noise_result.h"
#include "sys/system_info.h"
#include "trace/explainer.h"

namespace rtpulse::suite {

/// The command line of `rtpulse noise`, before any check (the CLI's defaults).
struct NoiseRequest {
  std::string cpus;                ///< -c; "": every online CPU but CPU 0 (when there are others).
  std::string duration = "10s";    ///< -D; "0": until Ctrl-C.
  std::optional<int> rtprio;       ///< -f N: SCHED_FIFO N (oslat's option).
  std::string policy = "fifo:95";  ///< --policy other | fifo:N | rr:N.
  bool policy_given = false;
  std::string threshold = "5us";     ///< A gap above it is a noise event.
  std::string bucket_width = "1us";  ///< -W.
  int buckets = 32;                  ///< -b, 4..1024.
  std::string stop_above;            ///< -T US: stop at the first gap above (oslat's unit, us).
  size_t events_kept = 200'000;
  bool explain = false;  ///< --explain: attribute each event from the kernel trace.
  /// --explain-max: events attributed per CPU (the first ones), the rest counted. Default: as
  /// many as are kept, so every listed event has its causes.
  size_t explain_max = 200'000;
};

struct NoisePlanned {
  measure::NoisePlan plan;
  std::vector<std::string> notes;             ///< Planning remarks the run records as warnings.
  std::optional<trace::ExplainPlan> explain;  ///< --explain's trace, on the polled CPUs.
  size_t explain_max = 0;                     ///< Per CPU.
  /// No run without the trace (hwlat's loop mode): a resource error before polling.
  bool explain_required = false;
};

/// Checks `request` against the machine under `root` (its online CPUs, RT throttling) and
/// builds the plan.
Expected<NoisePlanned> BuildNoisePlan(const NoiseRequest& request, const FsRoot& root);

/// Runs the plan (SIGINT/SIGTERM, blocked by the caller, end it early: `interrupted`, partial
/// results) and returns what it measured with the machine's facts and every warning.
Expected<results::NoiseRun> MeasureNoise(const NoisePlanned& planned, const sys::SystemInfo& info,
                                         const std::string& invocation, const std::string& version);

}  // namespace rtpulse::suite
