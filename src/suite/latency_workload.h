#pragma once

#include <optional>
#include <string>
#include <vector>

#include "measure/plan.h"
#include "suite/explain_live.h"
#include "suite/runner.h"
#include "sys/system_info.h"
#include "trace/explainer.h"
#include "trace/timerlat.h"

namespace rtpulse::suite {

/// The 1 us histogram behind the cyclictest-compatible files (histogram.txt, -h block).
inline constexpr int64_t kLinearHistogramUs = 1000;

/// What a suite's latency probes are: one SCHED_FIFO thread per measured CPU, the same in
/// every scenario.
struct LatencySettings {
  std::vector<int> cpus;
  int priority = 80;
  int64_t interval_ns = 1'000'000;
  std::vector<measure::WakePath> wake{measure::WakePath::kAbs};
  /// --wake ...,timerlat: the tracer's plan on the probes' CPUs, period and priority (its
  /// duration set per scenario), run after `wake`'s paths (docs/wake-paths.md#timerlat).
  std::optional<trace::TimerlatPlan> timerlat;
  bool samples = false;  ///< Log every sample to <scenario>/samples.bin.
  /// suite --explain US: per scenario an explainer over the probes' samples, its raw windows
  /// in <scenario>/explain/ (window_dir is set per scenario), the summary in the scenario's
  /// latency (docs/suite.md#explain). No cost phase in a suite (`latency --explain` has one).
  std::optional<trace::ExplainPlan> explain;
  VerdictLineFn verdict_line;      ///< How a verdict is said while the run goes on.
  std::vector<std::string> notes;  ///< Planning remarks for the run's warnings.
};

/// The typed latency plan for `settings` (pinned threads, no -d distance, the 1 us linear
/// histogram, rings sized for --samples). Usage errors: no CPU, a priority outside 1..99, the
/// itimer path (one per process) with more than one CPU.
Expected<measure::LatencyPlan> SuiteLatencyPlan(const LatencySettings& settings);

/// The latency engine as a suite workload: measure::RunLatency per scenario, its per-sample
/// log in the scenario folder, checkpoints and live status passed on to the runner.
class LatencyWorkload final : public Workload {
 public:
  LatencyWorkload(measure::LatencyPlan plan, LatencySettings settings, sys::SystemInfo info,
                  std::string version, std::string invocation);

  nlohmann::json ConfigJson() const override;
  std::vector<std::string> Notes() const override { return plan_.notes; }
  Expected<Measured> Measure(const std::string& dir, const std::string& name, int64_t duration_ns,
                             int64_t checkpoint_ns,
                             const std::function<void(const results::LatencyRun&)>& checkpoint,
                             Progress& progress) override;

 private:
  /// Fills in the machine, the version and the invocation.
  void FillRunFacts(results::LatencyRun& run) const;

  measure::LatencyPlan plan_;
  LatencySettings settings_;
  sys::SystemInfo info_;
  std::string version_;
  std::string invocation_;
};

}  // namespace rtpulse::suite
