// Micro-benchmarks of the pieces the probe thread runs once per sample (histogram record,
// clock read, sample ring push) and of what the reporting side runs once per run
// (percentile, merge, ring drain, the compare bootstrap). Numbers only: no thresholds (see
// bench/README.md).
//
//   build/bench/rtpulse_micro_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <random>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "measure/sample_log.h"
#include "stats/compare.h"

namespace rtpulse {
namespace {

// A power of two, so the benchmark loops index with a mask instead of a modulo; 64 Ki values
// (512 KiB) are more than the histogram ever sees as distinct hot buckets in one run.
constexpr size_t kValueCount = size_t{1} << 16;
constexpr size_t kValueMask = kValueCount - 1;
constexpr uint64_t kSeed = 20261129;  // fixed: every run records the same values

enum class Shape : int64_t {
  kQuietRt = 0,   ///< PREEMPT_RT on bare metal: 1-20 us, narrow.
  kVm = 1,        ///< This VM: 5-100 us body, 0.1 % host-steal spikes of 4-15 ms.
  kSpread = 2,    ///< Worst case: log-uniform 1 ns .. 2^40 ns, a new bucket nearly every time.
  kConstant = 3,  ///< Best case: one value, one hot bucket.
};

const char* ShapeName(Shape shape) {
  switch (shape) {
    case Shape::kQuietRt:
      return "quiet_rt";
    case Shape::kVm:
      return "vm";
    case Shape::kSpread:
      return "spread";
    case Shape::kConstant:
      return "constant";
  }
  return "?";
}

std::vector<int64_t> MakeLatencies(Shape shape) {
  std::mt19937_64 rng(kSeed);
  std::vector<int64_t> values(kValueCount);
  // Log-normal bodies: scheduling latencies are skewed to the right.
  std::lognormal_distribution<double> quiet(std::log(4000.0), 0.35);  // median 4 us
  std::lognormal_distribution<double> vm(std::log(15000.0), 0.5);     // median 15 us
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // Up to 2^40 ns: every level of the layout, and the top bucket's edge.
  std::uniform_real_distribution<double> exponent(0.0,
                                                  static_cast<double>(Histogram::kTopExponent));
  for (int64_t& v : values) {
    switch (shape) {
      case Shape::kQuietRt:
        v = std::llround(std::clamp(quiet(rng), 1000.0, 20000.0));
        break;
      case Shape::kVm:
        v = unit(rng) < 0.001 ? std::llround(4e6 + unit(rng) * 11e6)
                              : std::llround(std::clamp(vm(rng), 5000.0, 100000.0));
        break;
      case Shape::kSpread:
        v = std::llround(std::exp2(exponent(rng)));
        break;
      case Shape::kConstant:
        v = 12345;
        break;
    }
  }
  return values;
}

// ---- Histogram ---------------------------------------------------------------------------

void BM_HistogramRecord(benchmark::State& state) {
  const auto shape = static_cast<Shape>(state.range(0));
  const std::vector<int64_t> values = MakeLatencies(shape);
  Histogram histogram;
  size_t i = 0;
  for (auto _ : state) {
    histogram.Record(values[i++ & kValueMask]);
  }
  benchmark::DoNotOptimize(histogram.count());
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(ShapeName(shape));
}
BENCHMARK(BM_HistogramRecord)
    ->Arg(static_cast<int64_t>(Shape::kConstant))
    ->Arg(static_cast<int64_t>(Shape::kQuietRt))
    ->Arg(static_cast<int64_t>(Shape::kVm))
    ->Arg(static_cast<int64_t>(Shape::kSpread));

// The spread case again with negative values mixed in (a wake-up before its deadline):
// both bucket arrays are touched, which is the largest working set Record can have.
void BM_HistogramRecordSignedSpread(benchmark::State& state) {
  std::vector<int64_t> values = MakeLatencies(Shape::kSpread);
  for (size_t j = 0; j < values.size(); j += 2) values[j] = -values[j];
  Histogram histogram;
  size_t i = 0;
  for (auto _ : state) {
    histogram.Record(values[i++ & kValueMask]);
  }
  benchmark::DoNotOptimize(histogram.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramRecordSignedSpread);

Histogram FilledHistogram(Shape shape, size_t samples) {
  const std::vector<int64_t> values = MakeLatencies(shape);
  Histogram histogram;
  for (size_t i = 0; i < samples; ++i) histogram.Record(values[i & kValueMask]);
  return histogram;
}

// Percentile walks the buckets from the most negative upwards, so its cost depends on where
// the rank lands, not on the sample count: p50 and p99.9 of a VM-shaped run, and the max.
void BM_HistogramPercentile(benchmark::State& state) {
  const auto shape = static_cast<Shape>(state.range(0));
  const double p = static_cast<double>(state.range(1)) / 1000.0;
  const Histogram histogram = FilledHistogram(shape, 1'000'000);
  for (auto _ : state) {
    benchmark::DoNotOptimize(histogram.Percentile(p));
  }
  state.SetLabel(ShapeName(shape));
}
BENCHMARK(BM_HistogramPercentile)
    ->ArgNames({"shape", "p_x1000"})
    ->Args({static_cast<int64_t>(Shape::kVm), 50'000})
    ->Args({static_cast<int64_t>(Shape::kVm), 99'900})
    ->Args({static_cast<int64_t>(Shape::kVm), 100'000})
    ->Args({static_cast<int64_t>(Shape::kSpread), 99'900});

// Merge is O(buckets) whatever the counts: two passes over 2 x 16385 uint64 (256 KiB each).
void BM_HistogramMerge(benchmark::State& state) {
  Histogram total = FilledHistogram(Shape::kVm, 100'000);
  const Histogram other = FilledHistogram(Shape::kVm, 100'000);
  for (auto _ : state) {
    total.Merge(other);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(total.count());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(2 * Histogram::kBucketsPerSign * sizeof(uint64_t)));
}
BENCHMARK(BM_HistogramMerge);

// ---- Clock -------------------------------------------------------------------------------

// One vDSO read when the clocksource allows it (tsc, kvm-clock); a real syscall otherwise
// (e.g. a hypervisor clocksource without vDSO support), which is what this number reveals.
void BM_ClockNs(benchmark::State& state) {
  const auto clock = static_cast<clockid_t>(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(ClockNs(clock));
  }
  state.SetLabel(clock == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_MONOTONIC_RAW");
}
BENCHMARK(BM_ClockNs)->Arg(CLOCK_MONOTONIC)->Arg(CLOCK_MONOTONIC_RAW);

// ---- Sample ring -------------------------------------------------------------------------

measure::SampleRecord MakeRecord(uint64_t seq) {
  measure::SampleRecord record{};
  record.seq = seq;
  record.expected_ns = static_cast<int64_t>(seq) * 1'000'000;
  record.actual_ns = record.expected_ns + 12'345;
  record.cpu = 1;
  return record;
}

// No PauseTiming/ResumeTiming here: on this VM they cost tens of microseconds (they read
// CPU-time clocks), more than a whole Drain of 4096 records (~3 us). Every ring benchmark
// times complete work instead and says what it includes.

// The probe's side: one Push per sample, into a ring the size the engine uses (64 Ki slots
// at 1 kHz). When the ring fills (once per 64 Ki pushes) it is drained inside the timed
// loop, which adds about 1 ns per record (see BM_SampleRingPushThenDrain).
void BM_SampleRingPush(benchmark::State& state) {
  measure::SampleRing ring(size_t{1} << 16);
  std::vector<measure::SampleRecord> sink(ring.capacity());
  uint64_t seq = 0;
  for (auto _ : state) {
    if (!ring.Push(MakeRecord(seq))) {
      ring.Drain(sink.data(), sink.size());
      ring.Push(MakeRecord(seq));
    }
    ++seq;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SampleRingPush);

// A full ring: Push only counts the drop (the writer fell behind).
void BM_SampleRingPushFull(benchmark::State& state) {
  measure::SampleRing ring(1024);
  while (ring.Push(MakeRecord(0))) {
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(ring.Push(MakeRecord(1)));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SampleRingPushFull);

// Both sides, one writer round at a time: `batch` pushes, then one Drain of them all (the
// writer drains up to 4096 per call). Per record: Push + the Drain's share.
void BM_SampleRingPushThenDrain(benchmark::State& state) {
  const auto batch = static_cast<size_t>(state.range(0));
  measure::SampleRing ring(size_t{1} << 16);
  std::vector<measure::SampleRecord> out(batch);
  uint64_t seq = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < batch; ++i) ring.Push(MakeRecord(seq++));
    benchmark::DoNotOptimize(ring.Drain(out.data(), out.size()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch));
}
BENCHMARK(BM_SampleRingPushThenDrain)->Arg(256)->Arg(4096);

// Push then Drain of one record, in one thread: the round trip through both indices.
void BM_SampleRingPushDrainOne(benchmark::State& state) {
  measure::SampleRing ring(4096);
  measure::SampleRecord out{};
  uint64_t seq = 0;
  for (auto _ : state) {
    ring.Push(MakeRecord(seq++));
    benchmark::DoNotOptimize(ring.Drain(&out, 1));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SampleRingPushDrainOne);

// ---- Compare bootstrap ---------------------------------------------------------------------

// `rtpulse compare`'s confidence intervals on two runs of 2.4 M samples each (600 s at 1 kHz
// on 4 CPUs), 500 replicates: each replicate costs O(buckets), not O(samples), so this stays
// well under a second however long the runs were.
void BM_BootstrapPercentileDifferences(benchmark::State& state) {
  Histogram a;
  Histogram b;
  std::mt19937_64 rng(9);
  std::lognormal_distribution<double> dist(9.0, 0.6);
  for (int i = 0; i < 2'400'000; ++i) {
    a.Record(static_cast<int64_t>(dist(rng)));
    b.Record(static_cast<int64_t>(dist(rng) * 1.01));
  }
  constexpr std::array<double, 3> kPercentiles = {50.0, 99.0, 99.9};
  for (auto _ : state) {
    auto ci = stats::BootstrapPercentileDifferences(a, b, kPercentiles, {});
    benchmark::DoNotOptimize(ci);
  }
}
BENCHMARK(BM_BootstrapPercentileDifferences)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rtpulse

BENCHMARK_MAIN();
