#pragma once

// rtpulse suite --tune-ab (docs/tuning.md#--tune-ab): each reversible tuning knob measured off
// and on in interleaved blocks, and its effect on p99.9 and max reported with a confidence
// interval. The design (which blocks, in which order) is made here before the run; the runner
// runs each block as one scenario with the knob applied or not; the analysis here turns the
// blocks' values into effects.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "results/suite_result.h"
#include "suite/suite_config.h"
#include "sys/tuning.h"

namespace rtpulse::suite {

/// Fewer complete pairs than this and no interval reaches 95% (the sign-test interval of 6
/// pairs covers 1 - 2/64 = 96.9%; of 5 pairs at most 93.8%).
inline constexpr int kAbMinPairs = 6;
/// Pairs per knob when --ab-pairs is not given.
inline constexpr int kAbDefaultPairs = 8;
/// The smallest coverage an interval is printed with.
inline constexpr double kAbConfidence = 0.95;

/// Whether a knob can be tried on this machine, found by applying it once and restoring it.
struct AbKnob {
  sys::TuneKnob knob = sys::TuneKnob::kGovernor;
  bool applies = false;
  /// Applies: what it changes ("RT throttling: 950000 -> -1"); otherwise why it cannot.
  std::string detail;
};

/// One block: one base scenario measured with one knob off (as found) or on.
struct AbBlock {
  sys::TuneKnob knob = sys::TuneKnob::kGovernor;
  int pair = 0;  ///< 1-based.
  bool on = false;
  std::string scenario;  ///< The base scenario's name.
};

/// The experiment: SuitePlan::config.scenarios holds one scenario per block, in run order.
struct TuneAbPlan {
  int pairs = 0;
  std::vector<AbKnob> knobs;    ///< Every knob, applicable or not.
  std::vector<AbBlock> blocks;  ///< Parallel to the expanded scenarios.
};

/// A knob from the records of applying it once (sys::Tuning::ToJson()).
AbKnob KnobFromRecords(sys::TuneKnob knob, const nlohmann::json& records);

/// A knob that was not tried, and why (RT throttling without --no-rt-throttling).
AbKnob KnobNotTried(sys::TuneKnob knob, std::string reason);

/// Replaces `config`'s scenarios by the blocks of every applicable knob: knob by knob, pair by
/// pair, pair p runs off then on when p is odd and on then off when p is even (ABBA), each
/// condition running every base scenario in order. Block names:
/// "<scenario>-<knob>-<pair, 2 digits>-<off|on>".
TuneAbPlan ExpandTuneAb(SuiteConfig& config, std::vector<AbKnob> knobs, int pairs);

/// What one block measured (its statistical_summary row).
struct AbValue {
  bool measured = false;  ///< Complete with samples; false: failed, interrupted or not run.
  std::string status;     ///< The scenario's status.
  int64_t p999_ns = 0;
  int64_t max_ns = 0;
  bool p999_exact = true;  ///< False: a bound (clipped histogram), not a value.
  bool max_exact = true;
  uint64_t samples = 0;
  uint64_t missed_activations = 0;
  uint64_t skipped_periods = 0;
};

/// A block's values from its scenario result.
AbValue BlockValue(const results::ScenarioResult& scenario);

/// The distribution-free interval for the median of paired differences: the k-th smallest and
/// k-th largest difference, k the largest with 2 P(Binomial(n, 1/2) <= k - 1) <= 1 - level.
struct MedianInterval {
  bool measurable = false;  ///< False: fewer than kAbMinPairs differences.
  double median = 0;
  double low = 0;
  double high = 0;
  double coverage = 0;  ///< 1 - 2 P(Binomial(n, 1/2) <= k - 1), at least `level`.
};
MedianInterval SignTestInterval(std::vector<double> differences, double level = kAbConfidence);

/// result.json's "tune_ab": the design, every block's values and tuning records, every
/// knob's effects. `values` and `tuning` are parallel to plan.blocks (a block not yet run has
/// a default value and null records).
nlohmann::json TuneAbJson(const TuneAbPlan& plan, const std::vector<AbValue>& values,
                          const std::vector<nlohmann::json>& tuning);

/// The text of tune_ab.txt and of the summary, from "tune_ab".
std::string FormatTuneAb(const nlohmann::json& tune_ab);

}  // namespace rtpulse::suite
