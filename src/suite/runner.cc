#include "suite/runner.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/file_owner.h"
#include "core/parse.h"
#include "core/test_stop.h"
#include "export/textfile.h"
#include "results/cyclictest_format.h"
#include "results/killed_run.h"

namespace rtpulse::suite {
namespace {

namespace fs = std::filesystem;
using results::ScenarioResult;
using results::ScenarioStatus;

/// The seed's one-line files: every line of `block` that starts with `prefix`.
std::string LinesStartingWith(const std::string& block, const std::string& prefix) {
  std::string out;
  size_t at = 0;
  while ((at = block.find(prefix, at)) != std::string::npos) {
    const size_t end = block.find('\n', at);
    out += block.substr(at, end - at) + "\n";
    at = end;
  }
  return out;
}

/// One suite run: owns the result, writes it, and keeps what must be undone.
class Run {
 public:
  Run(const SuitePlan& plan, const Services& services) : plan_(plan), services_(services) {}

  RunOutcome Execute();

 private:
  std::string Path(const std::string& name) const { return plan_.out_dir + "/" + name; }
  int64_t Now() const { return services_.realtime_ns(); }
  void Say(const std::string& line) const {
    if (services_.progress != nullptr) services_.progress->Say(line);
  }

  // Phases, in order.
  std::optional<RunOutcome> Prepare();
  std::optional<RunOutcome> Refuse();
  std::optional<RunOutcome> StartTuningAndMonitor();
  void RunScenario(size_t index);
  bool StartLoadsAndSettle(size_t index, ScenarioLoads& loads);
  void MeasureScenario(size_t index);
  void StopLoads(size_t index, ScenarioLoads& loads);
  std::unique_ptr<SuiteTuning> ApplyBlockKnob(size_t index);
  void RestoreBlockKnob(size_t index, SuiteTuning* knob);
  void UpdateTuneAb(size_t index);
  RunOutcome Finish();

  // Writing.
  void WriteResult();
  void Write(const std::string& path, const std::string& text);
  void WriteScenarioFiles(const ScenarioResult& s);
  void NoteWriteError(const Error& error);

  const SuitePlan& plan_;
  const Services& services_;
  results::SuiteResult result_;
  Preflight preflight_;
  std::unique_ptr<SuiteTuning> tuning_;
  std::unique_ptr<SuiteMonitor> monitor_;
  std::vector<AbValue> ab_values_;         ///< --tune-ab: per block, once it ran.
  std::vector<nlohmann::json> ab_tuning_;  ///< --tune-ab: an "on" block's tuning records.
  std::optional<Error> write_error_;
  bool interrupted_ = false;
  bool failed_ = false;
};

void Run::NoteWriteError(const Error& error) {
  if (write_error_) return;  // reported once
  write_error_ = error;
  Say(fmt::format("error: {}", error.message));
}

void Run::WriteResult() {
  result_.updated_realtime_ns = Now();
  if (Status s = WriteFileAtomic(Path("result.json"), results::ToJson(result_).dump(1) + "\n");
      !s) {
    NoteWriteError(s.error());
  }
  if (!plan_.textfile_dir.empty()) {
    if (Status s = exporter::WriteTextfile(plan_.textfile_dir, exporter::SuiteRunFamilies(result_));
        !s) {
      NoteWriteError(s.error());
    }
  }
}

void Run::Write(const std::string& path, const std::string& text) {
  if (Status s = WriteFileAtomic(path, text); !s) NoteWriteError(s.error());
}

void Run::WriteScenarioFiles(const ScenarioResult& s) {
  if (!s.latency) return;
  const std::string dir = Path(s.name) + "/";
  const results::LatencyRun& run = *s.latency;
  Write(dir + "cyclictest.json", results::ToJson(run, false).dump(2) + "\n");
  std::string block;
  std::string status_lines;
  for (const auto& path : run.paths) {
    if (run.paths.size() > 1) block += fmt::format("# wake path: {}\n", path.wake);
    block += results::FormatHistogramBlock(path, false, false);
    for (const auto& p : path.probes) {
      status_lines += results::FormatStatusLine(results::StatusOf(p, false), false) + "\n";
    }
  }
  Write(dir + "histogram.txt", block);
  Write(dir + "cyclictest_raw.txt", block + status_lines);
  Write(dir + "min_latency.txt", LinesStartingWith(block, "# Min Latencies:"));
  Write(dir + "avg_latency.txt", LinesStartingWith(block, "# Avg Latencies:"));
  Write(dir + "max_latency.txt", LinesStartingWith(block, "# Max Latencies:"));
}

/// Output folder, pre-flight, the initial result.json and the system files.
std::optional<RunOutcome> Run::Prepare() {
  if (Status s = CreateFolders(plan_.out_dir); !s) {
    Say(fmt::format("error: --out '{}': {}", plan_.out_dir, s.error().message));
    // Missing privilege or space is exit 3; anything else about the folder is bad input.
    return RunOutcome{
        s.error().code == ExitCode::kResource ? ExitCode::kResource : ExitCode::kUsage, {}};
  }
  preflight_ = services_.preflight();

  result_.rtpulse_version = plan_.version;
  result_.cmdline = plan_.invocation;
  result_.budget = plan_.budget;
  result_.start_realtime_ns = Now();
  result_.writer = results::CurrentWriter();
  result_.config = ConfigJson(plan_);
  if (services_.workload != nullptr) result_.config.update(services_.workload->ConfigJson());
  result_.system = preflight_.system;
  result_.warnings = preflight_.warnings;
  if (services_.workload != nullptr) {
    for (auto& note : services_.workload->Notes()) result_.warnings.push_back(std::move(note));
  }
  const SuiteConfig& c = plan_.config;
  for (const auto& s : c.scenarios) {
    ScenarioResult r;
    r.name = s.name;
    r.description = s.description;
    r.load_specs = s.load_specs;
    r.settle_ns = ScenarioSettle(c, s);
    r.planned_ns = ScenarioDuration(c, s);
    result_.scenarios.push_back(std::move(r));
  }
  if (plan_.tune_ab) {
    ab_values_.assign(plan_.tune_ab->blocks.size(), AbValue{});
    ab_tuning_.assign(plan_.tune_ab->blocks.size(), nlohmann::json());
    result_.tune_ab = TuneAbJson(*plan_.tune_ab, ab_values_, ab_tuning_);
  }
  WriteResult();
  Write(Path("system_info.txt"), preflight_.text);
  Write(Path("system_info.json"), result_.system.dump(2) + "\n");
  Say(fmt::format("pre-flight: {} pass, {} warn, {} fail (details: {})", preflight_.pass,
                  preflight_.warn, preflight_.fail, Path("system_info.txt")));
  return std::nullopt;
}

/// --strict with a failed check: record the refusal, say why, run nothing.
std::optional<RunOutcome> Run::Refuse() {
  if (!plan_.strict || preflight_.fail == 0) return std::nullopt;
  result_.status = "refused";
  WriteResult();
  for (const auto& line : preflight_.failures) Say("fail: " + line);
  Say(
      fmt::format("error: --strict: {} pre-flight check(s) failed; nothing was run. Fix them, or "
                  "run without --strict",
                  preflight_.fail));
  return RunOutcome{ExitCode::kFailure, std::move(result_)};
}

/// Tunings (restored on every way out) and the monitor for the whole suite.
std::optional<RunOutcome> Run::StartTuningAndMonitor() {
  if (plan_.tune && services_.tune) {
    auto applied = services_.tune(Path("tuning_journal.json"));
    if (!applied) {
      Say("error: " + applied.error().message);
      return RunOutcome{applied.error().code, std::move(result_)};
    }
    tuning_ = std::move(*applied);
    result_.tuning = tuning_->ToJson();
    Say("--tune:\n" + tuning_->Describe());
  }
  auto monitor = services_.monitor(Path("thermal_power_log.csv"));
  if (!monitor) {
    if (tuning_) (void)tuning_->Restore();
    Say("error: " + monitor.error().message);
    return RunOutcome{monitor.error().code, std::move(result_)};
  }
  monitor_ = std::move(*monitor);
  monitor_->Start();
  result_.monitor = {{"csv", "thermal_power_log.csv"},
                     {"stats", "power_thermal_stats.txt"},
                     {"interval_s", static_cast<double>(plan_.config.monitor_interval_ns) / 1e9},
                     {"notes", monitor_->Notes()}};
  WriteResult();
  return std::nullopt;
}

/// False when the loads did not start (then none runs and the scenario has failed).
bool Run::StartLoadsAndSettle(size_t index, ScenarioLoads& loads) {
  ScenarioResult& r = result_.scenarios[index];
  if (Status s = loads.Start(); !s) {
    if (services_.pause->StopPending()) {
      // A SIGINT/SIGTERM to the process group stops the loads as they start: that is the
      // interruption, not a load that failed.
      r.status = ScenarioStatus::kInterrupted;
      r.error = "interrupted while the loads started; nothing measured";
      interrupted_ = true;
      return false;
    }
    r.status = ScenarioStatus::kFailed;
    r.error = "loads did not start: " + s.error().message;
    failed_ = true;
    return false;
  }
  if (r.settle_ns > 0 && services_.pause->Wait(r.settle_ns, [&](int64_t left) {
        if (services_.progress != nullptr) services_.progress->Settling(left);
      })) {
    r.status = ScenarioStatus::kInterrupted;
    r.error = "interrupted while the loads settled; nothing measured";
    interrupted_ = true;
  }
  return true;
}

void Run::MeasureScenario(size_t index) {
  const Scenario& scenario = plan_.config.scenarios[index];
  ScenarioResult& r = result_.scenarios[index];
  r.status = ScenarioStatus::kMeasuring;
  WriteResult();  // on disk as it starts: a reader of result.json sees the scenario measure
  const auto checkpoint = [&](const results::LatencyRun& partial) {
    r.latency = partial;
    WriteResult();
    if (Status s = monitor_->WriteStats(Path("power_thermal_stats.txt"), false); !s) {
      r.warnings.push_back(s.error().message);
    }
  };
  Progress idle;
  Progress& progress = services_.progress != nullptr ? *services_.progress : idle;
  const std::optional<BusyReading> before =
      services_.busy ? std::optional(services_.busy()) : std::nullopt;
  auto measured = services_.workload->Measure(Path(scenario.name), scenario.name, r.planned_ns,
                                              plan_.checkpoint_ns, checkpoint, progress);
  if (before) {
    IntegrityCheck check = CheckIntegrity(scenario, plan_.cpus, *before, services_.busy());
    r.cpu_busy = std::move(check.json);
    for (auto& w : check.warnings) r.warnings.push_back(std::move(w));
  }
  progress.Done();
  if (!measured) {
    r.status = ScenarioStatus::kFailed;
    r.error = measured.error().message;
    r.latency.reset();
    failed_ = true;
    return;
  }
  for (auto& w : measured->warnings) r.warnings.push_back(std::move(w));
  if (measured->write_error) NoteWriteError(*measured->write_error);
  r.samples_file = measured->samples_file;
  r.exact_percentiles = measured->exact_percentiles;
  r.exact_per_period_percentiles = measured->exact_per_period_percentiles;
  results::LatencyRun& m = measured->latency;
  m.warnings.insert(m.warnings.begin(), result_.warnings.begin(), result_.warnings.end());
  m.return_code = measured->interrupted ? ToInt(ExitCode::kInterrupted) : 0;
  interrupted_ = measured->interrupted;
  r.status = measured->interrupted ? ScenarioStatus::kInterrupted : ScenarioStatus::kComplete;
  r.latency = std::move(m);
}

void Run::StopLoads(size_t index, ScenarioLoads& loads) {
  ScenarioResult& r = result_.scenarios[index];
  loads.Stop();
  r.loads = loads.Reports();
  for (auto& w : loads.Warnings()) r.warnings.push_back(std::move(w));
}

std::unique_ptr<SuiteTuning> Run::ApplyBlockKnob(size_t index) {
  if (!plan_.tune_ab || index >= plan_.tune_ab->blocks.size()) return nullptr;
  const AbBlock& block = plan_.tune_ab->blocks[index];
  if (!block.on || !services_.tune_knob) return nullptr;
  ScenarioResult& r = result_.scenarios[index];
  auto applied = services_.tune_knob(block.knob, Path(r.name + "/tuning_journal.json"));
  if (!applied) {
    r.status = ScenarioStatus::kFailed;
    r.error = "--tune-ab: " + applied.error().message;
    failed_ = true;
    return nullptr;
  }
  ab_tuning_[index] = (*applied)->ToJson();
  return std::move(*applied);
}

void Run::RestoreBlockKnob(size_t index, SuiteTuning* knob) {
  if (knob == nullptr) return;
  if (Status s = knob->Restore(); !s) {
    result_.scenarios[index].warnings.push_back("tuning restore: " + s.error().message);
    Say("error: " + s.error().message);
  }
  ab_tuning_[index] = knob->ToJson();
}

void Run::UpdateTuneAb(size_t index) {
  if (!plan_.tune_ab) return;
  if (index < ab_values_.size()) ab_values_[index] = BlockValue(result_.scenarios[index]);
  result_.tune_ab = TuneAbJson(*plan_.tune_ab, ab_values_, ab_tuning_);
}

void Run::RunScenario(size_t index) {
  const SuiteConfig& c = plan_.config;
  const Scenario& scenario = c.scenarios[index];
  ScenarioResult& r = result_.scenarios[index];
  int64_t after = 0;
  for (size_t k = index + 1; k < c.scenarios.size(); ++k) {
    after += ScenarioDuration(c, c.scenarios[k]) + ScenarioSettle(c, c.scenarios[k]);
  }
  if (services_.progress != nullptr) {
    services_.progress->Scenario(index, c.scenarios.size(), scenario.name, r.planned_ns, after);
  }
  // The monitor's rows between the scenario's start and end carry its name.
  if (monitor_) monitor_->SetScenario(scenario.name);
  r.start_realtime_ns = Now();
  if (Status s = CreateFolders(Path(scenario.name)); !s) {
    r.status = ScenarioStatus::kFailed;
    r.error = s.error().message;
    r.end_realtime_ns = Now();
    if (monitor_) monitor_->SetScenario("");
    failed_ = true;
    Say(fmt::format("scenario {}: {}", scenario.name, r.error));
    WriteResult();
    return;
  }
  r.status = ScenarioStatus::kSettling;
  WriteResult();

  // --tune-ab: the knob is on for the whole block, settle included, and off again before the
  // next block starts.
  std::unique_ptr<SuiteTuning> knob = ApplyBlockKnob(index);
  if (knob) {
    // On disk before the block runs: a guardian that restores the knob for a killed rtpulse
    // finds the record it marks restored.
    result_.tune_ab = TuneAbJson(*plan_.tune_ab, ab_values_, ab_tuning_);
    WriteResult();
  }
  if (r.status == ScenarioStatus::kSettling) {
    const std::unique_ptr<ScenarioLoads> loads = services_.loads(scenario);
    if (StartLoadsAndSettle(index, *loads)) {
      if (r.status == ScenarioStatus::kSettling) MeasureScenario(index);
      StopLoads(index, *loads);
    }
  }
  RestoreBlockKnob(index, knob.get());
  if (knob) TestStopAt("knob-restored");
  UpdateTuneAb(index);
  if (!r.error.empty() && r.status == ScenarioStatus::kFailed) {
    Say(fmt::format("scenario {}: {}", scenario.name, r.error));
  }
  for (const auto& w : r.warnings) Say(fmt::format("{}: warning: {}", scenario.name, w));
  r.end_realtime_ns = Now();
  if (monitor_) monitor_->SetScenario("");
  WriteScenarioFiles(r);
  WriteResult();
  // The knob's guardian outlives its restore until this write records it: a death in between
  // is marked killed (restored by rtpulse), never left "running" with the knob applied.
  if (knob) knob->Release();
}

/// Wind down in the reverse order (monitor, tunings), then the final files.
RunOutcome Run::Finish() {
  if (monitor_) {
    if (Status s = monitor_->Stop(); !s) result_.warnings.push_back(s.error().message);
    if (Status s = monitor_->WriteStats(Path("power_thermal_stats.txt"), interrupted_); !s) {
      NoteWriteError(s.error());
    }
  }
  if (tuning_) {
    if (Status s = tuning_->Restore(); !s) {
      result_.warnings.push_back("tuning restore: " + s.error().message);
      Say("error: " + s.error().message);
    }
    result_.tuning = tuning_->ToJson();
    TestStopAt("tunings-restored");
  }
  result_.status = interrupted_ ? "interrupted" : failed_ ? "failed" : "complete";
  Write(Path("statistical_summary.txt"), results::FormatStatisticalSummary(result_));
  if (plan_.tune_ab) Write(Path("tune_ab.txt"), FormatTuneAb(result_.tune_ab));
  Write(Path("statistical_summary.json"), results::StatisticalSummaryJson(result_).dump(2) + "\n");
  WriteResult();
  // The guardian stayed (marking only) until the final result is on disk (WriteFileAtomic
  // syncs before the rename): a SIGKILL at any moment leaves the final status or "killed".
  if (tuning_) {
    TestStopAt("final-written");
    tuning_->Release();
  }
  ExitCode code = ExitCode::kOk;
  if (interrupted_) {
    code = ExitCode::kInterrupted;
  } else if (write_error_ && write_error_->code == ExitCode::kResource) {
    code = ExitCode::kResource;  // no space left, or no permission (docs/cli.md)
  } else if (failed_ || write_error_) {
    code = ExitCode::kFailure;
  }
  return RunOutcome{code, std::move(result_)};
}

RunOutcome Run::Execute() {
  if (auto stop = Prepare()) return std::move(*stop);
  if (auto stop = Refuse()) return std::move(*stop);
  // A results folder that cannot be written is a failure before anything starts.
  if (write_error_) {
    return RunOutcome{
        write_error_->code == ExitCode::kResource ? ExitCode::kResource : ExitCode::kFailure,
        std::move(result_)};
  }
  if (auto stop = StartTuningAndMonitor()) return std::move(*stop);
  for (size_t i = 0; i < plan_.config.scenarios.size() && !interrupted_; ++i) RunScenario(i);
  if (services_.progress != nullptr) services_.progress->Done();
  return Finish();
}

}  // namespace

std::string FormatClock(int64_t ns) {
  const int64_t s = std::max<int64_t>(0, ns / kNsPerSec);
  return fmt::format("{:02d}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60);
}

int64_t ScenarioDuration(const SuiteConfig& c, const Scenario& s) {
  return s.duration_ns.value_or(c.duration_ns);
}

int64_t ScenarioSettle(const SuiteConfig& c, const Scenario& s) {
  return s.settle_ns.value_or(c.settle_ns);
}

nlohmann::json ConfigJson(const SuitePlan& plan) {
  const SuiteConfig& c = plan.config;
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& s : c.scenarios) {
    scenarios.push_back({{"name", s.name},
                         {"description", s.description},
                         {"loads", s.load_specs},
                         {"duration_s", static_cast<double>(ScenarioDuration(c, s)) / 1e9},
                         {"settle_s", static_cast<double>(ScenarioSettle(c, s)) / 1e9}});
  }
  return {{"name", c.name},
          {"source", c.source},
          {"cpus", FormatCpuList(plan.cpus)},
          {"monitor_interval_s", static_cast<double>(c.monitor_interval_ns) / 1e9},
          {"checkpoint_interval_s", static_cast<double>(plan.checkpoint_ns) / 1e9},
          {"scenarios", scenarios}};
}

std::string FormatScenarioList(const SuitePlan& plan) {
  const SuiteConfig& c = plan.config;
  std::string out =
      fmt::format("suite '{}' ({}), CPUs {}:\n", c.name, c.source, FormatCpuList(plan.cpus));
  int64_t total = 0;
  for (const auto& s : c.scenarios) {
    const int64_t d = ScenarioDuration(c, s);
    const int64_t settle = ScenarioSettle(c, s);
    total += d + settle;
    out += fmt::format("  {:<14} {:>8} (+{} settle)  {}\n", s.name, FormatClock(d),
                       FormatClock(settle), s.description);
    for (const auto& spec : s.load_specs) out += fmt::format("  {:<14} load {}\n", "", spec);
  }
  out += fmt::format("total about {}\n", FormatClock(total));
  return out;
}

RunOutcome RunSuite(const SuitePlan& plan, const Services& services) {
  Run run(plan, services);
  return run.Execute();
}

}  // namespace rtpulse::suite
