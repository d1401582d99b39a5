// Writes a long run's samples log for bench/long_run (issue 15): SECONDS x CPUS threads at
// RATE Hz each, through the real writer (measure::OpenSamplesFile, so whatever format is the
// default), threads interleaved in batches as the suite's drain writes them. Latencies are a
// deterministic body of 5..60 us with one stall of a few periods per ~20000 activations
// (flagged missed, its skipped periods left out of seq as the probe does). Usage:
//   rtpulse_long_run_samples OUT SECONDS [CPUS (default 4)] [RATE_HZ (default 1000)]
// Prints the records written. Exit codes: 0 written, 1 the file could not be written, 2 bad
// usage.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/clock.h"
#include "measure/sample_log.h"
#include "measure/wake_path.h"

namespace rtpulse {
namespace {

int WriteLongRun(const std::string& out, int64_t seconds, int cpus, int64_t rate_hz) {
  const int64_t start_ns = 1000 * kNsPerSec;
  const int64_t period_ns = kNsPerSec / rate_hz;
  auto sink = measure::OpenSamplesFile(out, {1'767'225'600'000'000'000, start_ns});
  if (!sink) {
    std::fprintf(stderr, "error: %s\n", sink.error().message.c_str());
    return 1;
  }
  constexpr int64_t kBatch = 256;  // per thread and write, like the drain's batches
  std::mt19937_64 rng(15);
  std::vector<uint64_t> seq(static_cast<size_t>(cpus), 0);
  std::vector<SampleRecord> batch;
  batch.reserve(static_cast<size_t>(kBatch * cpus));
  const uint64_t periods = static_cast<uint64_t>(seconds * rate_hz);
  uint64_t written = 0;
  for (uint64_t from = 0; from < periods; from += kBatch) {
    batch.clear();
    for (int t = 0; t < cpus; ++t) {
      uint64_t& s = seq[static_cast<size_t>(t)];
      while (s < from + kBatch && s < periods) {
        SampleRecord r{};
        r.seq = s;
        r.thread = static_cast<uint16_t>(t);
        r.cpu = static_cast<uint16_t>(t);
        r.wake_path = static_cast<uint8_t>(measure::WakePath::kAbs);
        r.expected_ns = start_ns + static_cast<int64_t>(s) * period_ns;
        const uint64_t draw = rng();
        int64_t latency_ns = 5000 + static_cast<int64_t>(draw % 55000);
        uint64_t skip = 0;
        if ((draw >> 40) % 20000 == 0) {  // a stall: woke 2..4 periods late
          skip = 2 + (draw >> 20) % 3;
          latency_ns = static_cast<int64_t>(skip) * period_ns + 1000;
          r.flags = SampleRecord::kMissed;
        }
        r.actual_ns = r.expected_ns + latency_ns;
        batch.push_back(r);
        s += 1 + skip;
      }
    }
    if (Status st = (*sink)->Write(batch.data(), batch.size()); !st) {
      std::fprintf(stderr, "error: %s\n", st.error().message.c_str());
      return 1;
    }
    written += batch.size();
  }
  if (Status st = (*sink)->Finish(0, false); !st) {
    std::fprintf(stderr, "error: %s\n", st.error().message.c_str());
    return 1;
  }
  std::printf("%llu\n", static_cast<unsigned long long>(written));
  return 0;
}

}  // namespace
}  // namespace rtpulse

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    std::fprintf(stderr, "usage: %s OUT SECONDS [CPUS] [RATE_HZ]\n", argv[0]);
    return 2;
  }
  const long long seconds = std::atoll(argv[2]);
  const int cpus = argc > 3 ? std::atoi(argv[3]) : 4;
  const long long rate = argc > 4 ? std::atoll(argv[4]) : 1000;
  if (seconds <= 0 || cpus <= 0 || cpus > 1024 || rate <= 0 || rate > 1000000) {
    std::fprintf(stderr,
                 "error: SECONDS %s, CPUS and RATE_HZ must be positive (CPUS <= 1024, RATE_HZ <= "
                 "1e6), e.g. 86400 4 1000\n",
                 argv[2]);
    return 2;
  }
  return rtpulse::WriteLongRun(argv[1], seconds, cpus, rate);
}
