#include "cli/scenario_progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

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

}  // namespace rtpulse::cli
