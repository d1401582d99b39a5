#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "monitor/source.h"
#include "monitor/stats.h"

namespace rtpulse::monitor {

struct SamplerOptions {
  int64_t interval_ns = 5 * kNsPerSec;       ///< --monitor-interval.
  std::vector<double> thresholds_c{80, 85};  ///< Pi 5 soft (80 C) and hard (85 C) limits.
};

/// The low-priority monitor: one thread at SCHED_IDLE (nice 19 if refused) takes a sample
/// of every source each interval, appends one CSV row and flushes it, so a crash keeps what
/// was logged. It never runs at a real-time priority, so it cannot delay the RT probes.
///
///   auto sampler = Sampler::Open(dir + "/thermal_power_log.csv", options,
///                                DefaultSources(FsRoot::System(), runner));
///   sampler->Start();  ... measure ...  sampler->Stop();
///   sampler->WriteStats(dir + "/power_thermal_stats.txt");
class Sampler {
 public:
  /// Starts every source (a missing one only adds a note), creates `csv_path` and writes the
  /// header. Errors: interval <= 0 (usage), the file cannot be created (usage: nothing run).
  /// An empty `csv_path` logs nothing: the readings are kept for Latest() and the statistics
  /// only (`rtpulse serve`, which runs for months).
  static Expected<std::unique_ptr<Sampler>> Open(const std::string& csv_path,
                                                 SamplerOptions options,
                                                 std::vector<std::unique_ptr<Source>> sources);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// Every source column after timestamp and elapsed_s, in CSV order (the text column
  /// `scenario` follows them, last).
  const std::vector<Column>& columns() const { return columns_; }
  /// Why columns are missing, and how the thread's priority was set.
  std::vector<std::string> notes() const;

  /// Samples every source at the given clock readings and appends one row. The thread calls
  /// it; unit tests call it directly for exact, timing-free values.
  Status SampleAt(int64_t monotonic_ns, int64_t realtime_ns);
  Status SampleOnce() { return SampleAt(MonotonicNs(), ClockNs(CLOCK_REALTIME)); }

  /// The `scenario` cell of the rows from now on ("" between scenarios and outside a suite).
  /// The suite runner sets it when a scenario starts and clears it when it ends. ',', '"'
  /// and line breaks are written as '_' so the cell never needs CSV quoting.
  void SetScenario(const std::string& name);

  /// Starts the thread: a sample at once, then one per interval on a fixed grid.
  void Start();
  /// Stops and joins the thread (idempotent); the first write error of the run, if any.
  Status Stop();

  /// Statistics so far (thread-safe).
  std::string StatsText(bool interrupted = false) const;
  /// Writes StatsText() atomically.
  Status WriteStats(const std::string& path, bool interrupted = false) const;
  uint64_t rows() const;
  /// The latest reading of every column, in columns() order; NaN where a value was not
  /// available, and everywhere before the first sample. Thread-safe, and never blocked by a
  /// sample in progress.
  std::vector<double> Latest() const;

 private:
  Sampler(std::FILE* csv, SamplerOptions options, std::vector<std::unique_ptr<Source>> sources,
          std::vector<size_t> widths, std::vector<Column> columns, std::vector<std::string> notes);
  void Run();

  std::FILE* csv_;
  SamplerOptions options_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<size_t> widths_;  ///< Columns per source.
  std::vector<Column> columns_;

  mutable std::mutex mutex_;  ///< Guards everything below and the sources.
  std::vector<std::string> notes_;
  StatsAccumulator stats_;
  std::vector<double> row_;
  /// row_ after the last complete sample, under its own lock: a reader (a /metrics scrape)
  /// never waits for a sample in progress, whose vcgencmd calls may take seconds.
  mutable std::mutex latest_mutex_;
  std::vector<double> latest_;
  int64_t first_ns_ = -1;
  std::string scenario_;
  std::optional<Error> write_error_;
  bool stop_ = false;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace rtpulse::monitor
