#include "suite/explain_live.h"

#include <fmt/format.h>

#include <utility>

#include "suite/explain_record.h"

namespace rtpulse::suite {

void SuiteVerdictLines::Add(std::string line) {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.push_back(std::move(line));
}

void SuiteVerdictLines::SayAll(Progress& progress) {
  std::vector<std::string> lines;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lines.swap(lines_);
  }
  for (const auto& line : lines) progress.Say(line);
}

results::ExplainResult SuiteExplainResult(const trace::ExplainSummary& summary,
                                          const std::string& run_dir,
                                          std::vector<std::string>& warnings) {
  results::ExplainResult result = ToExplainResult(summary, run_dir);
  if (!summary.active) {
    warnings.push_back(fmt::format("--explain: {}; the run goes on without attribution",
                                   summary.unavailable_reason));
  }
  return result;
}

}  // namespace rtpulse::suite
