// `rtpulse samples FILE`: reads a per-sample log (docs/samples-format.md) and prints a
// summary or every record as CSV.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "measure/sample_log.h"
#include "stats/record_totals.h"
#include "suite/samples_text.h"

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

/// Problems with the data itself: the file is still read, but nobody should miss these.
void PrintWarnings(const std::string& path, const SamplesFileSummary& s) {
  for (const std::string& w : suite::SamplesFileWarnings(path, s)) {
    std::fprintf(stderr, "rtpulse: warning: %s\n", w.c_str());
  }
}

// `--check`: every block verified, what can be recovered said, exit 1 when damaged.
int RunCheck(const SamplesOptions& options) {
  const auto check = CheckSamplesFile(options.path);
  if (!check) return ReportError(check.error());
  const SamplesCheck& c = *check;
  const std::string text = suite::FormatSamplesCheck(options.path, c);
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
  std::unique_ptr<suite::SamplesCsvWriter> csv;
  if (options.csv) csv = std::make_unique<suite::SamplesCsvWriter>(stdout);
  const auto summary = measure::ReadSamplesFile(options.path, [&](const SampleRecord& record) {
    totals.Add(record);
    if (csv) csv->Add(record);
  });
  if (!summary) return ReportError(UsageError(summary.error().message));
  if (csv) csv->Flush();
  // With --csv, stdout stays pure CSV: an explicit --summary goes to stderr.
  if (!options.csv || options.summary) {
    std::fputs(suite::FormatSamplesSummary(options.path, *summary, totals).c_str(),
               options.csv ? stderr : stdout);
  }
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
