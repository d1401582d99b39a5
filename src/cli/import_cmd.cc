// rtpulse import: other tools' outputs -> a results folder that report, compare and wcet read
// (docs/import.md). Every input is read and checked before anything is kept: a bad file
// leaves --out as it was.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/file_owner.h"
#include "core/printable.h"
#include "core/samples_file.h"
#include "core/version.h"
#include "importers/import.h"
#include "importers/import_scenario.h"
#include "measure/sample_log.h"
#include "results/suite_result.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;

struct ImportCliOptions {
  std::vector<std::string> files;
  std::string out;
  std::string format;
  std::vector<std::string> names;
  std::string unit = "us";
  bool no_samples = false;
  bool quiet = false;
  int jobs = 0;
};

/// Streams imported samples into a samples file: records in 2 MiB batches, built in place;
/// one-value-per-line latencies as they are (the sink encodes them without records).
class SamplesFileConsumer final : public importers::SampleConsumer {
 public:
  explicit SamplesFileConsumer(std::unique_ptr<measure::SampleSink> sink)
      : sink_(std::move(sink)), batch_(kBatch) {}
  void Add(const importers::TimedSample& s) override {
    measure::SampleRecord& r = batch_[used_++];
    r = measure::SampleRecord{};
    r.seq = s.seq;
    r.expected_ns = s.expected_ns;
    r.actual_ns = s.expected_ns + s.latency_ns;
    r.thread = s.thread;
    r.cpu = s.cpu;
    if (used_ == kBatch) Flush();
  }
  void AddLatencies(const int64_t* latency_ns, size_t n, uint64_t first_seq) override {
    Flush();  // records added before keep their place
    if (status_) status_ = sink_->WriteLatencies(latency_ns, n, first_seq);
  }
  Status Finish() {
    Flush();
    if (!status_) return status_;
    return sink_->Finish(0, false);
  }

 private:
  static constexpr size_t kBatch = 65536;
  void Flush() {
    if (status_ && used_ > 0) status_ = sink_->Write(batch_.data(), used_);
    used_ = 0;
  }
  std::unique_ptr<measure::SampleSink> sink_;
  std::vector<measure::SampleRecord> batch_;  // kBatch records, the first used_ of them filled
  size_t used_ = 0;
  Status status_;
};

/// Removes what this run created under `out` (and `out` itself if it did not exist).
void Undo(const std::string& out, bool created_out) {
  std::error_code ec;
  if (created_out) {
    fs::remove_all(out, ec);
    return;
  }
  for (const auto& entry : fs::directory_iterator(out, ec)) fs::remove_all(entry.path(), ec);
}

/// What an import does, checked before anything is written: the parse options and each
/// input's scenario name.
struct ImportPlan {
  importers::ImportOptions options;
  std::vector<std::string> names;  ///< One per file, in order.
};

Expected<importers::ImportOptions> ParseImportOptions(const ImportCliOptions& o) {
  importers::ImportOptions options;
  if (!o.format.empty()) {
    options.format = importers::FormatFromName(o.format);
    if (!options.format) {
      const std::string guess = DidYouMean(o.format, importers::FormatNames());
      return UsageError(
          fmt::format("--format '{}' is not a format{}; formats: {}", o.format,
                      guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess),
                      fmt::join(importers::FormatNames(), ", ")));
    }
  }
  const std::vector<std::pair<std::string, int64_t>> units = {
      {"ns", 1}, {"us", 1000}, {"ms", 1'000'000}, {"s", 1'000'000'000}};
  const auto unit =
      std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == o.unit; });
  if (unit == units.end()) {
    return UsageError(fmt::format("--unit '{}': use ns, us, ms or s", o.unit));
  }
  options.unit_ns = unit->second;
  if (o.jobs < 0 || o.jobs > 64) {
    return UsageError(fmt::format(
        "--jobs {}: give 1..64 threads (0 or no --jobs: one per CPU, at most 4)", o.jobs));
  }
  options.threads = o.jobs;
  return options;
}

Expected<std::vector<std::string>> ScenarioNames(const ImportCliOptions& o) {
  if (!o.names.empty() && o.names.size() != o.files.size()) {
    return UsageError(fmt::format("{} --name for {} files: give one --name per file, in order",
                                  o.names.size(), o.files.size()));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < o.files.size(); ++i) {
    names.push_back(o.names.empty() ? importers::ScenarioName(o.files[i]) : o.names[i]);
    if (names.back().empty() || names.back().find('/') != std::string::npos ||
        names.back()[0] == '.') {
      return UsageError(fmt::format(
          "scenario name '{}' is not a folder name; use --name with letters, digits, - _ .",
          names.back()));
    }
    if (std::count(names.begin(), names.end(), names.back()) > 1) {
      return UsageError(fmt::format("two inputs would both be scenario '{}'; name them with --name",
                                    names.back()));
    }
  }
  return names;
}

Expected<ImportPlan> BuildImportPlan(const ImportCliOptions& o) {
  auto options = ParseImportOptions(o);
  if (!options) return options.error();
  auto names = ScenarioNames(o);
  if (!names) return names.error();
  if (Status s = CheckOutputFolder(o.out); !s) return s.error();
  return ImportPlan{*options, std::move(*names)};
}

/// One input into scenario `name` of `suite` (its samples into out/NAME/samples.bin when the
/// format keeps the samples' order); `inputs` gains its row of result.json's config.
Status ImportOne(const ImportCliOptions& o, const ImportPlan& plan, size_t i,
                 results::SuiteResult& suite, nlohmann::json& inputs) {
  const std::string& file = o.files[i];
  const std::string& name = plan.names[i];
  importers::ImportOptions file_options = plan.options;
  if (!file_options.format) {
    auto detected = importers::DetectFormat(file);
    if (!detected) return detected.error();
    file_options.format = *detected;
  }
  std::unique_ptr<SamplesFileConsumer> consumer;
  std::string samples_rel;
  std::string samples_path;
  if (importers::FormatKeepsOrder(*file_options.format) && !o.no_samples) {
    samples_rel = name + "/samples.bin";
    samples_path = o.out + "/" + samples_rel;
    if (Status s = CreateFolders(o.out + "/" + name); !s) return s;
    auto sink = measure::OpenSamplesFile(samples_path, measure::SamplesFileInfo{});
    if (!sink) return sink.error();
    // Encoding and writing on a thread of their own, beside the parse.
    consumer = std::make_unique<SamplesFileConsumer>(measure::MakeBackgroundSink(std::move(*sink)));
  }
  auto imported = importers::ImportFile(file, file_options, consumer.get());
  if (!imported) return imported.error();
  if (consumer) {
    if (Status s = consumer->Finish(); !s) return s;
  }
  inputs.push_back({{"file", file},
                    {"format", importers::FormatName(imported->format)},
                    {"scenario", name},
                    {"samples_file", samples_rel},
                    {"source_numbers", imported->source_numbers},
                    {"warnings", imported->warnings}});
  suite.scenarios.push_back(
      importers::ImportedScenario(name, file, *imported, samples_rel, Invocation()));
  if (imported->exact_percentiles) {
    suite.scenarios.back().exact_percentiles = imported->exact_percentiles;
  } else if (consumer) {
    importers::AddExactPercentiles(suite.scenarios.back(), samples_path);
  }
  return Status::Ok();
}

/// Every input into one results run (nothing written but the samples files).
Expected<results::SuiteResult> ImportAll(const ImportCliOptions& o, const ImportPlan& plan) {
  results::SuiteResult suite;
  suite.rtpulse_version = kVersion;
  suite.cmdline = Invocation();
  suite.status = "complete";
  suite.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  suite.warnings.push_back(
      "imported from other tools' outputs: rtpulse did not measure these runs, so missed "
      "periods and the machine's state are unknown");
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t i = 0; i < o.files.size(); ++i) {
    if (Status s = ImportOne(o, plan, i, suite, inputs); !s) return s.error();
  }
  suite.config = {{"name", "import"}, {"source", "import"}, {"inputs", inputs}};
  suite.updated_realtime_ns = ClockNs(CLOCK_REALTIME);
  return suite;
}

Status WriteImportFiles(const std::string& out, const results::SuiteResult& suite) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"result.json", results::ToJson(suite).dump(2) + "\n"},
      {"statistical_summary.txt", results::FormatStatisticalSummary(suite)},
      {"statistical_summary.json", results::StatisticalSummaryJson(suite).dump(2) + "\n"},
  };
  for (const auto& [name, content] : files) {
    if (Status s = WriteFileAtomic(out + "/" + name, content); !s) return s;
  }
  return Status::Ok();
}

int RunImport(const ImportCliOptions& o) {
  auto plan = BuildImportPlan(o);
  if (!plan) return ReportError(plan.error());
  std::error_code ec;
  const bool created_out = !fs::exists(o.out, ec);
  if (Status s = CreateFolders(o.out); !s) {
    return ReportError(
        Error{s.error().code, fmt::format("--out '{}': {}", o.out, s.error().message)});
  }
  auto suite = ImportAll(o, *plan);
  Status written = suite ? WriteImportFiles(o.out, *suite) : Status(suite.error());
  if (!written) {
    Undo(o.out, created_out);
    return ReportError(written.error());
  }
  // What the inputs made us warn about goes to stderr even with -q, like latency's warnings.
  for (const auto& s : suite->scenarios) {
    for (const auto& w : s.warnings) {
      std::fprintf(stderr, "rtpulse: warning: %s: %s\n", Printable(s.name).c_str(),
                   Printable(w).c_str());
    }
  }
  if (!o.quiet) {
    std::fputs(results::FormatStatisticalSummary(*suite).c_str(), stdout);
    std::printf("wrote %s/result.json (%zu scenario%s)\n", o.out.c_str(), suite->scenarios.size(),
                suite->scenarios.size() == 1 ? "" : "s");
  }
  return 0;
}

}  // namespace

Runner SetupImport(CLI::App& sub) {
  auto o = std::make_shared<ImportCliOptions>();
  sub.add_option("FILE", o->files,
                 "files written by cyclictest, jitterdebugger, rt-app, or one "
                 "value per line")
      ->required();
  sub.add_option("-o,--out", o->out, "results folder to create (new or empty)")->required();
  sub.add_option(
      "--format", o->format,
      "force the format: " + fmt::format("{}", fmt::join(importers::FormatNames(), ", ")) +
          " (default: detected from the content)");
  sub.add_option("--name", o->names, "scenario name per file, in order (default: the file stem)");
  sub.add_option("--unit", o->unit, "unit of one-value-per-line files: ns, us, ms, s (default us)");
  sub.add_flag("--no-samples", o->no_samples,
               "do not write <scenario>/samples.bin for time-ordered inputs");
  sub.add_option("--jobs", o->jobs,
                 "threads that parse a large one-value-per-line file with --no-samples "
                 "(default: one per CPU, at most 4)");
  sub.add_flag("-q,--quiet", o->quiet, "print nothing on success");
  return [o] { return RunImport(*o); };
}

}  // namespace rtpulse::cli
