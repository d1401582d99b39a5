// How much memory do exact percentiles from a samples log cost? Writes a synthetic samples
// file of N records (two threads, 1 ms period, a log-normal-ish body and rare multi-period
// stalls), builds the run's histograms from the same records, then times
// results::ExactPercentilesFromLog (the code `latency --samples` and `suite --samples` run)
// and reports the peak RSS it added against what holding every latency would take (8 B per
// sample). Numbers only, no threshold (bench/README.md). Usage:
//   rtpulse_exact_percentiles_memory [N (default 2e7)] [DIR (default /var/tmp)]
// Exit codes: 0 measured, 1 a file could not be written or read, 2 bad usage.

#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/samples_file.h"
#include "results/log_percentiles.h"
#include "stats/summary.h"

namespace rtpulse {
namespace {

/// Peak resident set size of this process so far, in KiB.
long PeakRssKib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int Run(uint64_t n, const std::string& dir) {
  const std::string path = dir + "/rtpulse_exact_bench." + std::to_string(getpid()) + ".bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "error: cannot write %s: pass a folder with %llu MB free\n", path.c_str(),
                 static_cast<unsigned long long>(n) * 32 / 1000000 + 1);
    return 1;
  }
  constexpr int64_t kInterval = 1'000'000;
  std::array<std::byte, samples_format::kHeaderBytes> header{};
  samples_format::EncodeHeader(SamplesFileInfo{}, header.data());
  std::fwrite(header.data(), 1, header.size(), f);
  results::PathRun run;
  run.wake = "abs";
  run.probes.resize(2);
  std::array<uint64_t, 2> seq{};
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> body(9.5, 0.6);  // about 13 us typical
  std::vector<SampleRecord> batch;
  batch.reserve(1 << 16);
  for (uint64_t i = 0; i < n; ++i) {
    const size_t t = i & 1;
    auto& p = run.probes[t];
    p.index = static_cast<int>(t);
    p.interval_ns = kInterval;
    const int64_t latency =
        i % 100'003 == 7 ? 3 * kInterval + 123'456 : static_cast<int64_t>(body(rng));
    const uint64_t skipped = static_cast<uint64_t>(latency / kInterval);
    SampleRecord r{};
    r.seq = seq[t];
    r.expected_ns = static_cast<int64_t>(seq[t]) * kInterval;
    r.actual_ns = r.expected_ns + latency;
    r.thread = static_cast<uint16_t>(t);
    r.flags = skipped > 0 ? SampleRecord::kMissed : uint8_t{0};
    batch.push_back(r);
    p.histogram.Record(latency);
    for (uint64_t j = 1; j <= skipped; ++j) {
      p.skipped_histogram.Record(latency - static_cast<int64_t>(j) * kInterval);
    }
    p.skipped_periods += skipped;
    seq[t] += 1 + skipped;
    p.periods_elapsed = seq[t];
    if (batch.size() == batch.capacity() || i + 1 == n) {
      std::fwrite(batch.data(), sizeof(SampleRecord), batch.size(), f);
      batch.clear();
    }
  }
  std::array<std::byte, samples_format::kTrailerBytes> trailer{};
  samples_format::EncodeTrailer(n, 0, false, trailer.data());
  std::fwrite(trailer.data(), 1, trailer.size(), f);
  if (std::fclose(f) != 0) return 1;

  const long before_kib = PeakRssKib();
  results::LogPercentileRequest request{path, uint8_t{0}, stats::kPercentiles, true};
  const auto start = std::chrono::steady_clock::now();
  auto exact = results::ExactPercentilesFromLog(run, request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long after_kib = PeakRssKib();
  std::remove(path.c_str());
  if (!exact) {
    std::fprintf(stderr, "error: %s\n", exact.error().message.c_str());
    return 1;
  }
  std::printf("samples              %llu (%.1f MB log)\n", static_cast<unsigned long long>(n),
              static_cast<double>(n) * 32 / 1e6);
  std::printf(
      "passes over the log  %llu (6 streams: 2 threads + all, per wake-up and per period)\n",
      static_cast<unsigned long long>(exact->passes));
  std::printf("most samples held    %llu (%.2f MB)\n",
              static_cast<unsigned long long>(exact->max_held),
              static_cast<double>(exact->max_held) * 8 / 1e6);
  std::printf("peak RSS added       %.1f MB (all samples in memory: %.1f MB)\n",
              static_cast<double>(after_kib - before_kib) / 1024.0,
              static_cast<double>(n) * 8 / 1e6);
  std::printf("wall time            %.2f s (%.0f MB/s of log read)\n", seconds,
              static_cast<double>(exact->passes) * static_cast<double>(n) * 32 / 1e6 / seconds);
  std::printf(
      "all threads p99.99   %lld ns, per period %lld ns\n", static_cast<long long>(exact->all[4]),
      static_cast<long long>(exact->all_per_period.empty() ? -1 : exact->all_per_period[4]));
  return 0;
}

}  // namespace
}  // namespace rtpulse

int main(int argc, char** argv) {
  uint64_t n = 20'000'000;
  std::string dir = "/var/tmp";
  if (argc > 1) {
    char* end = nullptr;
    const double v = std::strtod(argv[1], &end);
    if (end == argv[1] || *end != '\0' || v < 1) {
      std::fprintf(stderr, "error: N '%s' is not a sample count: give e.g. 2e7\n", argv[1]);
      return 2;
    }
    n = static_cast<uint64_t>(v);
  }
  if (argc > 2) dir = argv[2];
  return rtpulse::Run(n, dir);
}
