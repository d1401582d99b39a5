// The k-way merge of a samples file's threads by deadline (sample_series.h).
#include "results/sample_series.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "core/samples_file.h"

namespace rtpulse::results {

namespace {

/// The old way, for a file whose threads' deadlines go back somewhere (never written by
/// rtpulse; a hand-made or corrupt file): every record in memory, a stable sort.
Expected<SampleSeries> SortedSeries(const std::string& path) {
  struct Item {
    int64_t expected_ns;
    uint16_t thread;
    int64_t latency_ns;
  };
  std::vector<Item> items;
  std::set<uint16_t> threads;
  auto summary = ReadSamplesFile(path, [&](const SampleRecord& r) {
    items.push_back({r.expected_ns, r.thread, LatencyNs(r)});
    threads.insert(r.thread);
  });
  if (!summary) return summary.error();
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.expected_ns != b.expected_ns ? a.expected_ns < b.expected_ns : a.thread < b.thread;
  });
  auto latency = std::make_shared<std::vector<double>>();
  latency->reserve(items.size());
  for (const auto& i : items) latency->push_back(static_cast<double>(i.latency_ns));
  SampleSeries s;
  s.pass = [latency](const std::function<void(double)>& sink) {
    for (const double v : *latency) sink(v);
    return Status::Ok();
  };
  s.threads = threads.size();
  s.dropped = summary->dropped;
  s.has_trailer = summary->has_trailer;
  return s;
}

/// One thread's records read but not yet merged, and how many it has still to come.
struct MergeQueue {
  std::deque<std::pair<int64_t, int64_t>> pending;  ///< (expected_ns, latency_ns)
  uint64_t unread = 0;
  bool ordered = true;
  int64_t last_expected_ns = 0;
};

/// One merge pass over the file: every record, merged by deadline, through `sink`. `counts`
/// holds each thread's records as the first pass found them.
Status MergePass(const std::string& path, const std::map<uint16_t, uint64_t>& counts,
                 const std::function<void(double)>& sink) {
  std::map<uint16_t, MergeQueue> queues;
  for (const auto& [thread, n] : counts) queues[thread].unread = n;
  // A thread blocks the merge while it has records to come and none waiting: one of them
  // could be the smallest.
  size_t blocked = queues.size();
  auto merge = [&] {
    while (blocked == 0) {
      MergeQueue* best = nullptr;
      for (auto& [thread, q] : queues) {  // ascending thread: ties go to the lower one
        if (!q.pending.empty() &&
            (best == nullptr || q.pending.front().first < best->pending.front().first)) {
          best = &q;
        }
      }
      if (best == nullptr) return;
      sink(static_cast<double>(best->pending.front().second));
      best->pending.pop_front();
      if (best->pending.empty() && best->unread > 0) ++blocked;
    }
  };
  bool changed = false;
  auto read = ReadSamplesFile(path, [&](const SampleRecord& r) {
    auto it = queues.find(r.thread);
    if (it == queues.end() || it->second.unread == 0) {
      changed = true;
      return;
    }
    MergeQueue& q = it->second;
    if (q.pending.empty()) --blocked;
    --q.unread;
    q.pending.emplace_back(r.expected_ns, LatencyNs(r));
    merge();
  });
  if (!read) return read.error();
  if (changed || blocked != 0) {
    return Failure(
        fmt::format("{} changed while it was read (its records differ between two passes); read it "
                    "again once the run that writes it has ended",
                    path));
  }
  merge();
  return Status::Ok();
}

}  // namespace

/// Every record of every probe thread, merged by deadline: one activation after another, as
/// they happened (the file interleaves threads in batches, docs/samples-format.md). The
/// order is a stable sort's by (expected_ns, thread), but made by a k-way merge: a first
/// pass counts each thread's records and checks its deadlines never go back, then every
/// pass the analysis asks for merges the file again, holding only the threads' skew in the
/// file, never the series.
Expected<SampleSeries> OpenSampleSeries(const std::string& path) {
  std::map<uint16_t, MergeQueue> queues;
  auto first = ReadSamplesFile(path, [&](const SampleRecord& r) {
    MergeQueue& q = queues[r.thread];
    if (q.unread > 0 && r.expected_ns < q.last_expected_ns) q.ordered = false;
    q.last_expected_ns = r.expected_ns;
    ++q.unread;
  });
  if (!first) return first.error();
  std::map<uint16_t, uint64_t> counts;
  for (const auto& [thread, q] : queues) {
    if (!q.ordered) return SortedSeries(path);
    counts[thread] = q.unread;
  }
  SampleSeries s;
  s.pass = [path, counts](const std::function<void(double)>& sink) {
    return MergePass(path, counts, sink);
  };
  s.threads = queues.size();
  s.dropped = first->dropped;
  s.has_trailer = first->has_trailer;
  return s;
}

}  // namespace rtpulse::results
