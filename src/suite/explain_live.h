// --explain inside a suite workload (latency, control): the live verdict lines, said by the
// thread that draws the progress, and the scenario's outcome for result.json
// (docs/suite.md#explain).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "results/explain_result.h"
#include "suite/runner.h"
#include "trace/explainer.h"

namespace rtpulse::suite {

/// --explain's verdict lines, queued by the explainer's analysis thread and said by the
/// thread that draws the progress (Progress is not thread-safe), so they never cut a line.
class SuiteVerdictLines {
 public:
  void Add(std::string line);
  /// Says and forgets the queued lines.
  void SayAll(Progress& progress);

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

/// The live line of an explained spike (the command's: cli/explain_text.h); none = the
/// verdict as it is.
using VerdictLineFn = std::function<std::string(const trace::Explanation&, const std::string&)>;

/// A scenario's --explain outcome for result.json: window files relative to `run_dir` (the
/// results folder), and a scenario warning when the trace could not run.
results::ExplainResult SuiteExplainResult(const trace::ExplainSummary& summary,
                                          const std::string& run_dir,
                                          std::vector<std::string>& warnings);

}  // namespace rtpulse::suite
