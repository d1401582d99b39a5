// What the explainer found (trace::ExplainSummary) in the result types that result.json and
// the latency JSON carry (results/explain_result.h). It lives in suite, the lowest module
// that sees both trace and results.
#pragma once

#include <string>

#include "results/explain_result.h"
#include "results/latency_result.h"
#include "trace/explainer.h"

namespace rtpulse::suite {

/// Every field of `summary` in a results::ExplainResult. Each spike's window_file is made
/// relative to `base_dir` when it lies inside it (result.json names files relative to the
/// result folder); a file outside it, or any file when `base_dir` is "", stays as written.
results::ExplainResult ToExplainResult(const trace::ExplainSummary& summary,
                                       const std::string& base_dir);

/// `latency --explain`'s outcome in `run`: the result, a note for a cost phase the run was too
/// short for (`cost_given` false: --explain-cost was not given; `duration` is -D as typed),
/// a note that the raw windows were not saved, and a warning when there was no trace.
void AddExplainToRun(const trace::ExplainSummary& summary, const trace::ExplainPlan& plan,
                     bool cost_given, const std::string& duration, results::LatencyRun& run);

/// `path` relative to `base_dir` when it lies inside it, else `path` unchanged.
std::string RelativeToBase(const std::string& path, const std::string& base_dir);

}  // namespace rtpulse::suite
