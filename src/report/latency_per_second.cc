#include "report/latency_per_second.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <queue>

#include "core/clock.h"

namespace rtpulse::report {
namespace {

/// The same rank the figure always used: ceil(0.99 x n), at least 1.
uint64_t PerSecondP99Rank(uint64_t count) {
  const auto rank = static_cast<uint64_t>(std::ceil(0.99 * static_cast<double>(count)));
  return std::max<uint64_t>(rank, 1);
}

/// Pass 2's state of one second: the largest `keep` latencies seen so far.
struct OpenSecond {
  uint64_t keep = 0;
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> top;
};

}  // namespace

Expected<LatencyPerSecond> ReadLatencyPerSecond(const std::string& path) {
  LatencyPerSecond out;
  std::map<int64_t, LatencySecond> seconds;
  auto first = ReadSamplesFile(path, [&](const SampleRecord& r) {
    const int64_t second = r.expected_ns / kNsPerSec;
    const int64_t latency_ns = LatencyNs(r);
    auto [it, fresh] = seconds.try_emplace(second);
    LatencySecond& s = it->second;
    if (fresh) {
      s.second = second;
      s.min_ns = latency_ns;
      s.max_ns = latency_ns;
    }
    ++s.count;
    if ((r.flags & SampleRecord::kMissed) != 0) ++s.missed;
    s.min_ns = std::min(s.min_ns, latency_ns);
    s.max_ns = std::max(s.max_ns, latency_ns);
  });
  if (!first) return first.error();
  out.summary = *first;

  // Pass 2: only seconds whose p99 is not their maximum need their top values; every
  // second's records are counted again, so a file that changed in between is caught.
  std::map<int64_t, OpenSecond> open;
  std::map<int64_t, uint64_t> recount;
  uint64_t held = 0;
  auto second_pass = ReadSamplesFile(path, [&](const SampleRecord& r) {
    const int64_t second = r.expected_ns / kNsPerSec;
    const uint64_t seen = ++recount[second];
    auto known = seconds.find(second);
    if (known == seconds.end() || seen > known->second.count) return;
    LatencySecond& s = known->second;
    const uint64_t keep = s.count - PerSecondP99Rank(s.count) + 1;
    if (keep == 1) return;  // the p99 is the max, known from pass 1
    auto [it, fresh] = open.try_emplace(second);
    OpenSecond& o = it->second;
    if (fresh) o.keep = keep;
    const int64_t latency_ns = LatencyNs(r);
    if (o.top.size() < o.keep) {
      o.top.push(latency_ns);
      ++held;
    } else if (latency_ns > o.top.top()) {
      o.top.pop();
      o.top.push(latency_ns);
    }
    out.max_held = std::max(out.max_held, held);
    if (seen == s.count) {
      s.p99_ns = o.top.top();
      held -= o.top.size();
      open.erase(it);
    }
  });
  if (!second_pass) return second_pass.error();
  if (recount.size() != seconds.size()) {
    return Failure(fmt::format(
        "{} changed while it was read ({} seconds of records, then {}); read it again once "
        "the run that writes it has ended",
        path, seconds.size(), recount.size()));
  }
  for (const auto& [second, s] : seconds) {
    const auto again = recount.find(second);
    const uint64_t n = again == recount.end() ? 0 : again->second;
    if (n != s.count) {
      return Failure(fmt::format(
          "{} changed while it was read (second {}: {} records, then {}); read it again once "
          "the run that writes it has ended",
          path, second, s.count, n));
    }
  }
  out.seconds.reserve(seconds.size());
  for (auto& [second, s] : seconds) {
    if (s.count - PerSecondP99Rank(s.count) + 1 == 1) s.p99_ns = s.max_ns;
    out.seconds.push_back(s);
  }
  return out;
}

}  // namespace rtpulse::report
