#include "cli/scenario_progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/explain_text.h"
#include "core/clock.h"

namespace rtpulse::cli {

void ScenarioProgress::Scenario(size_t index, size_t count, const std::string& name,
                                int64_t planned_ns, int64_t after_ns) {
  index_ = index;
  count_ = count;
  name_ = name;
  planned_ns_ = planned_ns;
  after_ns_ = after_ns;
}

void ScenarioProgress::Done() {
  if (mode_ == LiveMode::kTty && shown_) std::fputs("\r\033[2K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

void ScenarioProgress::Say(const std::string& line) {
  Done();
  fmt::print(stderr, "rtpulse: {}\n", line);
}

void ScenarioProgress::Show(const std::string& line) {
  if (mode_ == LiveMode::kOff) return;
  const int64_t now = MonotonicNs();
  if (mode_ == LiveMode::kTty) {
    std::fprintf(stderr, "\r\033[2K%s", line.c_str());
    shown_ = true;
  } else {
    if (last_plain_ns_ >= 0 && now - last_plain_ns_ < 10 * kNsPerSec) return;
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  last_plain_ns_ = now;
  std::fflush(stderr);
}

LiveMode StderrProgressMode(bool quiet) {
  if (quiet) return LiveMode::kOff;
  return isatty(STDERR_FILENO) != 0 ? LiveMode::kTty : LiveMode::kPlain;
}

void PrintRunEnd(const suite::RunOutcome& outcome, const std::string& out_dir, std::FILE* out) {
  for (const auto& s : outcome.result.scenarios) {
    if (!s.latency || !s.latency->explain) continue;
    int64_t measured_ns = 0;
    for (const auto& path : s.latency->paths) measured_ns += path.duration_ns;
    fmt::print(out, "\nscenario {}:\n{}", s.name,
               FormatExplainTable(*s.latency->explain, measured_ns));
  }
  for (const auto& w : outcome.result.warnings) fmt::print(out, "warning: {}\n", w);
  fmt::print(out, "results: {}\n", out_dir);
  std::fflush(stdout);
}

}  // namespace rtpulse::cli
