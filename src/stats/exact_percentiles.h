// Exact nearest-rank percentiles from a log of every sample, without holding the log in
// memory (docs/percentiles.md): the histogram says which bucket holds each wanted rank, and
// further streaming passes over the log keep only the samples inside those few buckets.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/error.h"
#include "core/histogram.h"

namespace rtpulse::stats {

/// Replays every sample of a log once per call, in any order, through `sink`. A pass that
/// cannot read the log returns the error.
using SamplePass = std::function<Status(const std::function<void(int64_t)>& sink)>;

/// What a selection found, and what it cost.
struct RankSelection {
  std::vector<int64_t> values;  ///< values[i] = the exact sample of rank ranks[i].
  uint64_t passes = 0;          ///< Passes over the log (refinements + the final one).
  /// Most samples held in memory at once: never more than the target windows' counts, and
  /// no window is collected while it holds more than `max_window` samples.
  uint64_t max_held = 0;
};

/// Exact values of nearest ranks (1-based, each in [1, histogram.count()]) of the samples
/// `pass` replays, which must be exactly the samples recorded in `histogram`. Each rank's
/// bucket is found from the histogram's counts; a bucket holding more than `max_window`
/// samples is narrowed by counting passes (64 equal sub-ranges each) until it holds at most
/// that many or is one value wide; a final pass collects the samples of the remaining windows
/// and nth_element picks each rank. A window one value wide needs no samples at all (every
/// bucket below 512 ns is one). A log that does not match the histogram (a window's count
/// differs) is an error (Failure), never a wrong value.
Expected<RankSelection> SelectRanks(const Histogram& histogram, const std::vector<uint64_t>& ranks,
                                    const SamplePass& pass, uint64_t max_window = 1u << 20);

/// Exact nearest-rank percentiles (rank = Histogram::NearestRank(p, N)) of a log: one pass
/// builds the log's own histogram, SelectRanks does the rest.
struct ExactPercentiles {
  Histogram histogram;          ///< Of the log's samples (compare it with the run's).
  std::vector<int64_t> values;  ///< values[i] for percentiles[i]; empty when N = 0.
  uint64_t passes = 0;          ///< Including the histogram's pass.
  uint64_t max_held = 0;
};
Expected<ExactPercentiles> ComputeExactPercentiles(const SamplePass& pass,
                                                   const std::vector<double>& percentiles,
                                                   uint64_t max_window = 1u << 20);

/// True when two histograms hold the same samples as far as can be told: every bucket's
/// count, and the exact count, min, max and sum. The exact percentiles of a log stand in for
/// a run's only when its histogram and the log's agree.
bool SameSamples(const Histogram& a, const Histogram& b);

}  // namespace rtpulse::stats
