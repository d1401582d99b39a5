// `rtpulse samples FILE`: reads a per-sample log (docs/samples-format.md) and prints a
// summary or every record as CSV.

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/clock.h"
#include "core/timestamp.h"
#include "measure/sample_log.h"
#include "measure/wake_path.h"
#include "stats/record_totals.h"

namespace rtpulse::cli {
namespace {

using measure::SampleRecord;
using measure::SamplesFileSummary;
using rtpulse::CheckSamplesFile;
using rtpulse::SamplesCheck;

struct SamplesOptions {
  std::string path;
  bool csv = false;
  bool summary = false;
  bool check = false;
};

int CpuColumn(uint16_t cpu) {
  return cpu == stats::kUnpinnedCpu ? -1 : cpu;
}

/// "12.345 us", exact (integer arithmetic), for any signed value.
std::string FormatUs(int64_t ns) {
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const auto us = static_cast<uint64_t>(kNsPerUs);
  return fmt::format("{}{}.{:03} us", ns < 0 ? "-" : "", magnitude / us, magnitude % us);
}

/// One group's line of the summary.
std::string Describe(const stats::RecordGroup& g) {
  if (g.count == 0) return "no records";
  return fmt::format("{} record{}, min {}, max {}, missed {}", g.count, g.count == 1 ? "" : "s",
                     FormatUs(g.min_ns), FormatUs(g.max_ns), g.missed);
}

/// Streams CSV lines through one buffer: millions of records, few write calls.
class CsvPrinter {
 public:
  explicit CsvPrinter(std::FILE* out) : out_(out) {
    fmt::format_to(std::back_inserter(buffer_),
                   "thread,cpu,seq,expected_ns,actual_ns,latency_ns,wake,missed\n");
  }

  void Add(const SampleRecord& r) {
    const auto wake = static_cast<measure::WakePath>(r.wake_path);
    fmt::format_to(std::back_inserter(buffer_), "{},{},{},{},{},{},{},{}\n", r.thread,
                   CpuColumn(r.cpu), r.seq, r.expected_ns, r.actual_ns, measure::LatencyNs(r),
                   measure::WakePathName(wake), (r.flags & SampleRecord::kMissed) != 0 ? 1 : 0);
    if (buffer_.size() >= kFlushBytes) Flush();
  }

  void Flush() {
    std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
    buffer_.clear();
  }

 private:
  static constexpr size_t kFlushBytes = 64 * 1024;
  std::FILE* out_;
  fmt::memory_buffer buffer_;
};

std::string FormatRealtime(int64_t realtime_ns) {
  const std::string text = UtcIsoSeconds(realtime_ns);
  return text.empty() ? "unknown" : text;
}

void PrintSummary(std::FILE* out, const std::string& path, const SamplesFileSummary& s,
                  const stats::RecordTotals& totals) {
  std::string text = fmt::format("samples file  {}\n", path);
  text += fmt::format("started       {} (CLOCK_MONOTONIC {} ns)\n",
                      FormatRealtime(s.info.start_realtime_ns), s.info.start_monotonic_ns);
  text += fmt::format("records       {}\n", s.records);
  if (totals.all.count > 0) {
    text += fmt::format("latency       min {}, max {}\n", FormatUs(totals.all.min_ns),
                        FormatUs(totals.all.max_ns));
    text += fmt::format("missed        {}\n", totals.all.missed);
  }
  if (s.has_trailer) {
    text += fmt::format("dropped       {}\n", s.dropped);
    text += fmt::format("interrupted   {}\n", s.interrupted ? "yes" : "no");
  } else {
    text += "dropped       unknown (no trailer)\n";
    text += "interrupted   unknown (no trailer)\n";
  }
  for (const auto& [thread, group] : totals.threads) {
    text +=
        fmt::format("  thread {:<4} cpu {:<3} {}\n", thread, CpuColumn(group.cpu), Describe(group));
  }
  std::fputs(text.c_str(), out);
}

/// Problems with the data itself: the file is still read, but nobody should miss these.
void PrintWarnings(const std::string& path, const SamplesFileSummary& s) {
  if (!s.has_trailer) {
    std::fprintf(stderr,
                 "rtpulse: warning: '%s' has no trailer: the run did not finish cleanly (crash, "
                 "or still running), so it may be cut short and its drop count is unknown\n",
                 path.c_str());
  }
  if (s.partial_bytes > 0 && s.version >= 2) {
    std::fprintf(stderr,
                 "rtpulse: warning: '%s' ends with %llu bytes from byte offset %llu that are "
                 "not a whole block (cut off or damaged), which were skipped; every block "
                 "before them was read ('rtpulse samples --check' says more)\n",
                 path.c_str(), static_cast<unsigned long long>(s.partial_bytes),
                 static_cast<unsigned long long>(s.torn_offset));
  } else if (s.partial_bytes > 0) {
    std::fprintf(stderr,
                 "rtpulse: warning: '%s' ends with a partial record (%llu of 32 bytes), which "
                 "was skipped\n",
                 path.c_str(), static_cast<unsigned long long>(s.partial_bytes));
  }
  if (s.dropped > 0) {
    std::fprintf(stderr,
                 "rtpulse: warning: %llu records were dropped while recording (the samples "
                 "ring was full) and are missing from '%s'\n",
                 static_cast<unsigned long long>(s.dropped), path.c_str());
  }
}

// `--check`: every block verified, what can be recovered said, exit 1 when damaged.
int RunCheck(const SamplesOptions& options) {
  const auto check = CheckSamplesFile(options.path);
  if (!check) return ReportError(check.error());
  const SamplesCheck& c = *check;
  std::string text = fmt::format("samples file  {}\n", options.path);
  text += fmt::format("version       {}\n", c.version);
  text += fmt::format("bytes         {}\n", c.file_bytes);
  if (c.version >= 2) {
    text += fmt::format("blocks        {} whole, {} bad\n", c.blocks_whole, c.blocks_bad);
    text += fmt::format("index         {}\n",
                        c.index_ok ? "present, matches the blocks" : "missing or damaged");
  }
  text += fmt::format("trailer       {}\n", c.has_trailer ? "yes" : "no");
  text += fmt::format("records       {} recovered\n", c.records);
  if (c.torn_bytes > 0) {
    text +=
        fmt::format("torn          {} bytes from byte offset {}\n", c.torn_bytes, c.torn_offset);
  } else {
    text += "torn          none\n";
  }
  text += fmt::format("status        {}\n", c.whole() ? "whole" : "damaged: " + c.problem);
  std::fputs(text.c_str(), stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    return ReportError(Failure("cannot write to standard output"));
  }
  return ToInt(c.whole() ? ExitCode::kOk : ExitCode::kFailure);
}

int RunSamples(const SamplesOptions& options) {
  if (options.check) {
    if (options.csv || options.summary) {
      return ReportError(
          UsageError("--check prints its own report: give it without --csv and --summary"));
    }
    return RunCheck(options);
  }
  stats::RecordTotals totals;
  std::unique_ptr<CsvPrinter> csv;
  if (options.csv) csv = std::make_unique<CsvPrinter>(stdout);
  const auto summary = measure::ReadSamplesFile(options.path, [&](const SampleRecord& record) {
    totals.Add(record);
    if (csv) csv->Add(record);
  });
  if (!summary) return ReportError(UsageError(summary.error().message));
  if (csv) csv->Flush();
  // With --csv, stdout stays pure CSV: an explicit --summary goes to stderr.
  if (!options.csv) PrintSummary(stdout, options.path, *summary, totals);
  if (options.csv && options.summary) PrintSummary(stderr, options.path, *summary, totals);
  PrintWarnings(options.path, *summary);
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    return ReportError(Failure("cannot write to standard output"));
  }
  return ToInt(ExitCode::kOk);
}

}  // namespace

Runner SetupSamples(CLI::App& sub) {
  auto options = std::make_shared<SamplesOptions>();
  sub.add_option("FILE", options->path,
                 "samples file written by 'rtpulse latency --samples' (a crashed run's "
                 "FILE.tmp.<pid> works too)")
      ->required();
  sub.add_flag("--csv", options->csv,
               "print every record as CSV: "
               "thread,cpu,seq,expected_ns,actual_ns,latency_ns,wake,missed");
  sub.add_flag("--summary", options->summary,
               "print the summary (the default); with --csv it goes to stderr");
  sub.add_flag("--check", options->check,
               "verify every block's checksum and say what is recoverable: exit 0 when whole, "
               "1 when damaged or cut off (a crash), 2 when not a samples file");
  return [options] { return RunSamples(*options); };
}

}  // namespace rtpulse::cli
