#include "results/log_percentiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "core/samples_file.h"
#include "stats/exact_percentiles.h"

namespace rtpulse::results {
namespace {

constexpr int kAllThreads = -1;

/// Replays the latencies of one stream of the log: one thread's (or every thread's of the
/// path) wake-ups, or their per-period entries.
class LogStream {
 public:
  LogStream(const PathRun& path, const LogPercentileRequest& request, int thread, bool per_period)
      : path_(path), request_(request), thread_(thread), per_period_(per_period) {}

  Status operator()(const std::function<void(int64_t)>& sink) const {
    // Per period: each thread's previous record waits for the next one (or the end), whose
    // seq says how many periods it swallowed.
    struct Pending {
      bool has = false;
      uint64_t seq = 0;
      int64_t latency_ns = 0;
      int64_t interval_ns = 0;
      uint64_t periods_elapsed = 0;
    };
    std::unordered_map<uint16_t, Pending> pending;
    for (const auto& p : path_.probes) {
      if (thread_ != kAllThreads && p.index != thread_) continue;
      pending[static_cast<uint16_t>(p.index)] = {false, 0, 0, p.interval_ns, p.periods_elapsed};
    }
    auto emit = [&](const Pending& q, uint64_t next_seq) {
      sink(q.latency_ns);
      const uint64_t gap = next_seq > q.seq + 1 ? next_seq - q.seq - 1 : 0;
      for (uint64_t j = 1; j <= gap; ++j) {
        sink(q.latency_ns - static_cast<int64_t>(j) * q.interval_ns);
      }
    };
    auto read = ReadSamplesFile(request_.samples_path, [&](const SampleRecord& r) {
      if (request_.wake_path && r.wake_path != *request_.wake_path) return;
      auto it = pending.find(r.thread);
      if (it == pending.end()) return;
      if (!per_period_) {
        sink(LatencyNs(r));
        return;
      }
      Pending& q = it->second;
      if (q.has) emit(q, r.seq);
      q.has = true;
      q.seq = r.seq;
      q.latency_ns = LatencyNs(r);
    });
    if (!read) return read.error();
    if (per_period_) {
      for (const auto& [index, q] : pending) {
        if (q.has) emit(q, q.periods_elapsed);
      }
    }
    return Status::Ok();
  }

 private:
  const PathRun& path_;
  const LogPercentileRequest& request_;
  int thread_;
  bool per_period_;
};

/// The exact values of one stream, or why they cannot stand in for `expected`.
Expected<std::vector<int64_t>> SelectFromLog(const PathRun& path,
                                             const LogPercentileRequest& request, int thread,
                                             bool per_period, const Histogram& expected,
                                             ExactPathPercentiles& out) {
  const std::vector<double> percentiles(request.percentiles.begin(), request.percentiles.end());
  auto exact =
      stats::ComputeExactPercentiles(LogStream(path, request, thread, per_period), percentiles);
  if (!exact) return exact.error();
  out.passes += exact->passes;
  out.max_held = std::max(out.max_held, exact->max_held);
  if (!stats::SameSamples(exact->histogram, expected)) {
    const std::string who =
        thread == kAllThreads ? "all threads" : fmt::format("thread {}", thread);
    return Failure(fmt::format(
        "{} does not hold exactly the {} {} of {} (the log gives {}, the run counted {}{})",
        request.samples_path, per_period ? "periods" : "samples", who, path.wake,
        exact->histogram.count(), expected.count(),
        exact->histogram.count() == expected.count() ? ", with other values" : ""));
  }
  if (expected.count() == 0) return std::vector<int64_t>(percentiles.size(), 0);
  return std::move(exact->values);
}

bool PerPeriodKnown(const PathRun& path) {
  for (const auto& p : path.probes) {
    if (!HasPerPeriod(p) || p.bounds.Any() || p.grid_restarts > 0) return false;
  }
  return !path.probes.empty();
}

}  // namespace

std::optional<std::vector<int64_t>> PickPercentiles(const ExactPathPercentiles& exact,
                                                    const std::vector<int64_t>& list,
                                                    std::span<const double> wanted) {
  if (list.size() != exact.percentiles.size()) return std::nullopt;
  std::vector<int64_t> out;
  for (const double p : wanted) {
    const auto at = std::find(exact.percentiles.begin(), exact.percentiles.end(), p);
    if (at == exact.percentiles.end()) return std::nullopt;
    out.push_back(list[static_cast<size_t>(at - exact.percentiles.begin())]);
  }
  return out;
}

std::optional<ExactPercentileValues> PickSummaryPercentiles(const ExactPathPercentiles& exact,
                                                            const std::vector<int64_t>& list) {
  const auto v = PickPercentiles(exact, list, kSummaryPercentiles);
  if (!v) return std::nullopt;
  return SummaryPercentileValues(*v);
}

Expected<ExactPathPercentiles> ExactPercentilesFromLog(const PathRun& path,
                                                       const LogPercentileRequest& request) {
  ExactPathPercentiles out;
  out.percentiles.assign(request.percentiles.begin(), request.percentiles.end());
  Histogram all;
  Histogram all_per_period;
  for (const auto& p : path.probes) {
    all.Merge(p.histogram);
    all_per_period.Merge(PerPeriodHistogram(p));
  }
  auto merged = SelectFromLog(path, request, kAllThreads, false, all, out);
  if (!merged) return merged.error();
  out.all = std::move(*merged);
  if (request.per_thread) {
    for (const auto& p : path.probes) {
      auto one = SelectFromLog(path, request, p.index, false, p.histogram, out);
      if (!one) return one.error();
      out.threads.push_back(std::move(*one));
    }
  }
  if (!PerPeriodKnown(path)) {
    uint64_t restarts = 0;
    for (const auto& p : path.probes) restarts += p.grid_restarts;
    // SCHED_DEADLINE re-anchors its grid after an overrun: the log's seq gaps then no longer
    // give every skipped period's deadline, so the per-period values are not replayed.
    if (restarts > 0) {
      out.per_period_note = fmt::format(
          "{} activations of {} re-anchored the period grid, so the log does not give every "
          "skipped period's deadline",
          restarts, path.wake);
    }
    return out;
  }
  // Per period: left out (bucket edges stand) rather than failing the per-wake-up values.
  auto periods = SelectFromLog(path, request, kAllThreads, true, all_per_period, out);
  if (!periods) {
    out.per_period_note = periods.error().message;
    return out;
  }
  std::vector<std::vector<int64_t>> threads;
  if (request.per_thread) {
    for (const auto& p : path.probes) {
      auto one = SelectFromLog(path, request, p.index, true, PerPeriodHistogram(p), out);
      if (!one) {
        out.per_period_note = one.error().message;
        return out;
      }
      threads.push_back(std::move(*one));
    }
  }
  out.all_per_period = std::move(*periods);
  out.threads_per_period = std::move(threads);
  return out;
}

}  // namespace rtpulse::results
