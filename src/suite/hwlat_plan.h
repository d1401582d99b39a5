#pragma once

// `rtpulse hwlat`'s plan and run (docs/hwlat.md): hwlatdetect's options as typed
// (HwlatRequest), checked and turned into a noise run with --explain (loop mode: busy loops on
// the CPUs, the kernel trace attributing every gap above the threshold), whose unaccounted time
// gives the samples. Every refusal is a usage error naming the option and the fix.
#include <optional>
#include <string>

#include "core/error.h"
#include "core/fs_root.h"
#include "results/hwlat_result.h"
#include "suite/noise_plan.h"
#include "sys/system_info.h"

namespace rtpulse::suite {

/// The command line of `rtpulse hwlat`, before any check (the CLI's defaults: hwlatdetect's).
struct HwlatRequest {
  std::string cpus;                ///< --cpu-list; "": every online CPU but CPU 0.
  std::string duration = "120";    ///< --duration: seconds, or 30s, 20m, 2h.
  std::string threshold = "10";    ///< --threshold: us (bare number) or with a unit.
  std::string hardlimit;           ///< --hardlimit: as threshold; "": the threshold.
  std::string policy = "fifo:95";  ///< --policy: the loops' policy.
  std::string mode = "auto";       ///< --mode auto | loop.
  size_t explain_max = 200'000;    ///< --explain-max: gaps attributed per CPU.
};

struct HwlatPlanned {
  NoisePlanned noise;  ///< The busy loops and their trace.
  int64_t threshold_ns = 0;
  int64_t hardlimit_ns = 0;
  std::string mode_reason;
};

/// Checks `request` against the machine under `root` (online CPUs, whether tracefs offers
/// the hwlat tracer) and builds the plan.
Expected<HwlatPlanned> BuildHwlatPlan(const HwlatRequest& request, const FsRoot& root);

/// Runs the loops with the trace (resource error, nothing measured, when the trace cannot be
/// had: loop mode needs it to tell hardware from OS noise) and derives the samples. With
/// `loops`, the loops' own run (its events and their causes: --events) is handed back too.
Expected<results::HwlatRun> MeasureHwlat(const HwlatPlanned& planned, const sys::SystemInfo& info,
                                         const std::string& invocation, const std::string& version,
                                         results::NoiseRun* loops = nullptr);

}  // namespace rtpulse::suite
