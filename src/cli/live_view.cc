#include "cli/live_view.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "core/clock.h"
#include "results/cyclictest_format.h"

namespace rtpulse::cli {
namespace {

constexpr int64_t kPlainEveryNs = 5 * kNsPerSec;

int64_t ToUnit(int64_t ns, bool nsecs) {
  return nsecs ? ns : ns / kNsPerUs;
}

results::StatusLine LiveStatus(const measure::LiveProbe& p, bool nsecs) {
  results::StatusLine l;
  l.index = p.index;
  l.tid = p.tid;
  l.priority = p.priority;
  l.interval_us = p.interval_ns / kNsPerUs;
  l.cycles = p.count;
  l.min = ToUnit(p.min_ns, nsecs);
  l.act = ToUnit(p.cur_ns, nsecs);
  l.avg = ToUnit(static_cast<int64_t>(p.avg_ns), nsecs);
  l.max = ToUnit(p.max_ns, nsecs);
  return l;
}

std::string Clock(int64_t ns) {
  const int64_t s = std::max<int64_t>(0, ns / kNsPerSec);
  return fmt::format("{:02d}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
}

}  // namespace

LiveMode ChooseLiveMode(bool quiet, bool verbose) {
  if (quiet || verbose) return LiveMode::kOff;
  return isatty(STDOUT_FILENO) != 0 ? LiveMode::kTty : LiveMode::kPlain;
}

LiveView::LiveView(LiveMode mode, std::FILE* out, bool nsecs, int64_t duration_ns, uint64_t loops,
                   std::vector<std::string> path_names)
    : mode_(mode),
      out_(out),
      nsecs_(nsecs),
      duration_ns_(duration_ns),
      loops_(loops),
      path_names_(std::move(path_names)) {}

void LiveView::OnPathStart(size_t path_index, measure::WakePath) {
  const std::lock_guard lock(mutex_);
  path_index_ = path_index;
  drawn_lines_ = 0;
  last_plain_ns_ = -1;
  drawn_max_.clear();
  if (mode_ != LiveMode::kOff && path_names_.size() > 1) {
    fmt::print(out_, "# wake path {} ({}/{})\n", path_names_[path_index], path_index + 1,
               path_names_.size());
  }
}

std::vector<std::string> LiveView::Lines(const std::vector<measure::LiveProbe>& probes) const {
  std::vector<std::string> lines;
  for (const auto& p : probes) {
    lines.push_back(results::FormatStatusLineWithTail(LiveStatus(p, nsecs_), nsecs_,
                                                      ToUnit(p.p99_ns, nsecs_), p.missed));
  }
  return lines;
}

std::vector<std::string> LiveView::StatusLines(
    const std::vector<measure::LiveProbe>& probes) const {
  std::vector<std::string> lines;
  for (const auto& p : probes)
    lines.push_back(results::FormatStatusLine(LiveStatus(p, nsecs_), nsecs_));
  return lines;
}

std::string LiveView::Eta(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) const {
  int64_t remaining = -1;
  if (duration_ns_ > 0) remaining = std::max<int64_t>(0, duration_ns_ - elapsed_ns);
  if (loops_ > 0 && !probes.empty()) {
    int64_t longest = 0;
    for (const auto& p : probes) {
      const uint64_t left = p.count >= loops_ ? 0 : loops_ - p.count;
      longest = std::max(longest, static_cast<int64_t>(left) * p.interval_ns);
    }
    remaining = remaining < 0 ? longest : std::min(remaining, longest);
  }
  const size_t paths_left = path_names_.size() - path_index_ - 1;
  if (remaining < 0) return fmt::format("elapsed {} (no end set: Ctrl-C stops)", Clock(elapsed_ns));
  if (duration_ns_ > 0) remaining += static_cast<int64_t>(paths_left) * duration_ns_;
  return fmt::format("elapsed {}  ETA {}", Clock(elapsed_ns), Clock(remaining));
}

void LiveView::OnTick(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) {
  if (fifo_ != nullptr) fifo_->Offer(StatusLines(probes));
  if (mode_ == LiveMode::kOff) return;
  const std::lock_guard lock(mutex_);
  if (refresh_on_max_) {
    // cyclictest -M: the screen changes only when some thread's maximum does.
    bool grew = drawn_max_.size() != probes.size();
    drawn_max_.resize(probes.size(), INT64_MIN);
    for (size_t i = 0; i < probes.size(); ++i) {
      if (probes[i].count > 0 && probes[i].max_ns > drawn_max_[i]) {
        drawn_max_[i] = probes[i].max_ns;
        grew = true;
      }
    }
    if (!grew) return;
  }
  auto lines = Lines(probes);
  lines.push_back(Eta(probes, elapsed_ns));
  if (mode_ == LiveMode::kTty) {
    if (drawn_lines_ > 0) fmt::print(out_, "\033[{}A", drawn_lines_);
    for (const auto& line : lines) fmt::print(out_, "\033[2K{}\n", line);
    drawn_lines_ = lines.size();
  } else {
    if (last_plain_ns_ >= 0 && elapsed_ns - last_plain_ns_ < kPlainEveryNs) return;
    last_plain_ns_ = elapsed_ns;
    for (const auto& line : lines) fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
}

void LiveView::Note(std::FILE* stream, const std::string& line) {
  const std::lock_guard lock(mutex_);
  if (mode_ == LiveMode::kTty && drawn_lines_ > 0) {
    fmt::print(out_, "\033[{}A\033[J", drawn_lines_);
    std::fflush(out_);
    drawn_lines_ = 0;
  }
  fmt::print(stream, "{}\n", line);
  std::fflush(stream);
}

void LiveView::OnStatsRequest(const std::vector<measure::LiveProbe>& probes,
                              measure::StatsRequest request) {
  const std::string block = results::CurrentStatusBlock(StatusLines(probes));
  if (request == measure::StatsRequest::kSharedMemory) {
    if (shared_ != nullptr) shared_->Write(block);
    return;
  }
  std::fputs(block.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace rtpulse::cli
