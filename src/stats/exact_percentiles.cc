#include "stats/exact_percentiles.h"

#include <fmt/format.h>

#include <algorithm>

namespace rtpulse::stats {
namespace {

constexpr int kSplits = 64;

/// A value range holding some wanted ranks: [lo, hi], `count` samples expected in it, and
/// the wanted ranks as 1-based positions within it.
struct Window {
  int64_t lo = 0;
  int64_t hi = 0;
  uint64_t count = 0;
  std::vector<std::pair<size_t, uint64_t>> wanted;  // (index into ranks, rank within window)
};

uint64_t Width(const Window& w) {  // hi - lo + 1 without overflow; 0 means 2^64
  return static_cast<uint64_t>(w.hi) - static_cast<uint64_t>(w.lo) + 1;
}

/// The windows of the histogram's buckets that hold `ranks`, clamped to [min, max].
std::vector<Window> BucketWindows(const Histogram& h, const std::vector<uint64_t>& ranks) {
  std::vector<size_t> order(ranks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
  std::vector<Window> windows;
  uint64_t before = 0;
  size_t next = 0;
  h.ForEachBucket([&](Histogram::Range r, uint64_t count) {
    bool opened = false;
    while (next < order.size() && ranks[order[next]] <= before + count) {
      if (!opened) {
        // The first and last buckets end at the exact extremes (and INT64_MIN, outside the
        // negative top bucket's edges, is then inside its window).
        Window w;
        w.lo = before == 0 ? h.min() : r.lo;
        w.hi = before + count == h.count() ? h.max() : r.hi;
        w.count = count;
        windows.push_back(std::move(w));
        opened = true;
      }
      windows.back().wanted.emplace_back(order[next], ranks[order[next]] - before);
      ++next;
    }
    before += count;
  });
  return windows;
}

constexpr size_t kNone = static_cast<size_t>(-1);

/// Index of the window holding v, or kNone (windows are disjoint and sorted by lo).
size_t Find(const std::vector<Window>& windows, int64_t v) {
  auto it = std::upper_bound(windows.begin(), windows.end(), v,
                             [](int64_t x, const Window& w) { return x < w.lo; });
  if (it == windows.begin()) return kNone;
  --it;
  return v <= it->hi ? static_cast<size_t>(it - windows.begin()) : kNone;
}

Error Mismatch(const Window& w, uint64_t found) {
  return Failure(fmt::format(
      "the samples log does not hold the histogram's samples: {} samples in [{}, {}] ns where "
      "the histogram has {}",
      found, w.lo, w.hi, w.count));
}

/// One counting pass that splits every window wider than one value and fuller than
/// `max_window` into kSplits sub-ranges and keeps the sub-ranges that hold wanted ranks.
Status Refine(std::vector<Window>& windows, const SamplePass& pass, uint64_t max_window) {
  std::vector<uint64_t> step(windows.size(), 0);
  std::vector<std::vector<uint64_t>> counts(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    const Window& w = windows[i];
    if (w.count <= max_window || w.lo == w.hi) continue;
    const uint64_t width = Width(w);
    step[i] = width == 0 ? (uint64_t{1} << 58) : (width + kSplits - 1) / kSplits;
    counts[i].assign(kSplits, 0);
  }
  Status s = pass([&](int64_t v) {
    const size_t i = Find(windows, v);
    if (i == kNone || step[i] == 0) return;
    const uint64_t offset = static_cast<uint64_t>(v) - static_cast<uint64_t>(windows[i].lo);
    ++counts[i][offset / step[i]];
  });
  if (!s) return s;
  std::vector<Window> out;
  for (size_t i = 0; i < windows.size(); ++i) {
    Window& w = windows[i];
    if (step[i] == 0) {
      out.push_back(std::move(w));
      continue;
    }
    uint64_t total = 0;
    for (uint64_t c : counts[i]) total += c;
    if (total != w.count) return Mismatch(w, total);
    uint64_t before = 0;
    size_t next = 0;  // wanted is sorted by rank within the window
    for (int k = 0; k < kSplits && next < w.wanted.size(); ++k) {
      const uint64_t c = counts[i][static_cast<size_t>(k)];
      if (next < w.wanted.size() && w.wanted[next].second <= before + c) {
        Window sub;
        sub.lo =
            static_cast<int64_t>(static_cast<uint64_t>(w.lo) + step[i] * static_cast<uint64_t>(k));
        const uint64_t last = step[i] * static_cast<uint64_t>(k + 1) - 1;
        // Width(w) - 1 wraps to 2^64 - 1 for the full 64-bit range, as intended.
        sub.hi =
            last >= Width(w) - 1 ? w.hi : static_cast<int64_t>(static_cast<uint64_t>(w.lo) + last);
        sub.count = c;
        while (next < w.wanted.size() && w.wanted[next].second <= before + c) {
          sub.wanted.emplace_back(w.wanted[next].first, w.wanted[next].second - before);
          ++next;
        }
        out.push_back(std::move(sub));
      }
      before += c;
    }
  }
  windows = std::move(out);
  return Status::Ok();
}

}  // namespace

Expected<RankSelection> SelectRanks(const Histogram& histogram, const std::vector<uint64_t>& ranks,
                                    const SamplePass& pass, uint64_t max_window) {
  RankSelection result;
  result.values.assign(ranks.size(), 0);
  for (uint64_t r : ranks) {
    if (r == 0 || r > histogram.count()) {
      return Failure(fmt::format("rank {} is outside 1..{}", r, histogram.count()));
    }
  }
  if (ranks.empty()) return result;
  if (max_window == 0) max_window = 1;
  std::vector<Window> windows = BucketWindows(histogram, ranks);
  auto needs_refining = [&] {
    return std::any_of(windows.begin(), windows.end(),
                       [&](const Window& w) { return w.count > max_window && w.lo != w.hi; });
  };
  while (needs_refining()) {
    if (Status s = Refine(windows, pass, max_window); !s) return s.error();
    ++result.passes;
  }
  // The final pass: collect only the samples of windows wider than one value.
  std::vector<std::vector<int64_t>> held(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    if (windows[i].lo != windows[i].hi) held[i].reserve(windows[i].count);
  }
  bool needs_pass =
      std::any_of(windows.begin(), windows.end(), [](const Window& w) { return w.lo != w.hi; });
  if (needs_pass) {
    std::vector<uint64_t> seen(windows.size(), 0);
    uint64_t holding = 0;
    Status s = pass([&](int64_t v) {
      const size_t u = Find(windows, v);
      if (u == kNone) return;
      ++seen[u];
      if (windows[u].lo == windows[u].hi) return;
      // Never past the expected count: a log with more samples than its histogram is caught
      // below, without the memory growing.
      if (held[u].size() < windows[u].count) {
        held[u].push_back(v);
        result.max_held = std::max(result.max_held, ++holding);
      }
    });
    if (!s) return s.error();
    ++result.passes;
    for (size_t i = 0; i < windows.size(); ++i) {
      if (seen[i] != windows[i].count) return Mismatch(windows[i], seen[i]);
    }
  }
  for (size_t i = 0; i < windows.size(); ++i) {
    for (const auto& [index, k] : windows[i].wanted) {
      if (windows[i].lo == windows[i].hi) {
        result.values[index] = windows[i].lo;
        continue;
      }
      auto& v = held[i];
      std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k - 1), v.end());
      result.values[index] = v[k - 1];
    }
  }
  return result;
}

Expected<ExactPercentiles> ComputeExactPercentiles(const SamplePass& pass,
                                                   const std::vector<double>& percentiles,
                                                   uint64_t max_window) {
  ExactPercentiles out;
  if (Status s = pass([&](int64_t v) { out.histogram.Record(v); }); !s) return s.error();
  out.passes = 1;
  if (out.histogram.count() == 0) return out;
  std::vector<uint64_t> ranks;
  for (double p : percentiles) ranks.push_back(Histogram::NearestRank(p, out.histogram.count()));
  auto selected = SelectRanks(out.histogram, ranks, pass, max_window);
  if (!selected) return selected.error();
  out.values = std::move(selected->values);
  out.passes += selected->passes;
  out.max_held = selected->max_held;
  return out;
}

bool SameSamples(const Histogram& a, const Histogram& b) {
  if (a.count() != b.count() || a.min() != b.min() || a.max() != b.max() || a.sum() != b.sum()) {
    return false;
  }
  std::vector<std::pair<Histogram::Range, uint64_t>> ba;
  a.ForEachBucket([&](Histogram::Range r, uint64_t c) { ba.emplace_back(r, c); });
  size_t i = 0;
  bool same = true;
  b.ForEachBucket([&](Histogram::Range r, uint64_t c) {
    if (i >= ba.size() || ba[i].first.lo != r.lo || ba[i].second != c) same = false;
    ++i;
  });
  return same && i == ba.size();
}

}  // namespace rtpulse::stats
