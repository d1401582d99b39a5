#pragma once

// `rtpulse samples`'s texts (docs/samples-format.md): the summary of a per-sample log, its CSV
// form (one line per record, streamed through one buffer), the warnings about the data itself
// and the `--check` report. Pure formatting: the command reads and prints.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/samples_file.h"
#include "measure/sample_log.h"
#include "stats/record_totals.h"

namespace rtpulse::suite {

/// Streams CSV lines (thread,cpu,seq,expected_ns,actual_ns,latency_ns,wake,missed) through
/// one buffer: millions of records, few write calls.
class SamplesCsvWriter {
 public:
  explicit SamplesCsvWriter(std::FILE* out);
  void Add(const SampleRecord& record);
  void Flush();

 private:
  static constexpr size_t kFlushBytes = 64 * 1024;
  std::FILE* out_;
  fmt::memory_buffer buffer_;
};

/// The summary: start, records, latency range, misses, drops, one line per thread.
std::string FormatSamplesSummary(const std::string& path, const measure::SamplesFileSummary& s,
                                 const stats::RecordTotals& totals);
/// Problems with the data (no trailer, a torn end, dropped records), one sentence each.
std::vector<std::string> SamplesFileWarnings(const std::string& path,
                                             const measure::SamplesFileSummary& s);
/// `--check`'s report of every block.
std::string FormatSamplesCheck(const std::string& path, const SamplesCheck& c);

}  // namespace rtpulse::suite
