#include "suite/services.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "core/clock.h"
#include "load/load_set.h"
#include "monitor/sampler.h"
#include "monitor/sources.h"
#include "results/killed_run.h"
#include "suite/facts.h"
#include "suite/integrity.h"
#include "sys/check.h"
#include "sys/check_report.h"
#include "sys/system_info.h"
#include "sys/tuning.h"

namespace rtpulse::suite {
namespace {

class LoadSetLoads final : public ScenarioLoads {
 public:
  /// `logs[i]`: load i's log as result.json names it (relative to the run folder), or "".
  LoadSetLoads(std::vector<load::LoadSpec> specs, std::vector<std::string> logs)
      : loads_(std::move(specs)), logs_(std::move(logs)) {}
  Status Start() override { return loads_.Start(); }
  void Stop() override { loads_.Stop(); }
  nlohmann::json Reports() const override {
    nlohmann::json reports = LoadReportsJson(loads_.Reports());
    for (size_t i = 0; i < reports.size() && i < logs_.size(); ++i) {
      if (!logs_[i].empty()) reports[i]["log"] = logs_[i];
    }
    return reports;
  }
  std::vector<std::string> Warnings() const override {
    std::vector<std::string> out;
    for (const auto& report : loads_.Reports()) {
      for (const auto& w : report.warnings) out.push_back(report.spec + ": " + w);
    }
    return out;
  }

 private:
  load::LoadSet loads_;
  std::vector<std::string> logs_;
};

class SamplerMonitor final : public SuiteMonitor {
 public:
  /// The runner must outlive the sampler's sources: both live here, runner first.
  explicit SamplerMonitor(std::unique_ptr<SystemCommandRunner> runner)
      : runner_(std::move(runner)) {}
  Status Open(const FsRoot& root, const std::string& csv_path, int64_t interval_ns) {
    monitor::SamplerOptions options;
    options.interval_ns = interval_ns;
    auto sampler =
        monitor::Sampler::Open(csv_path, options, monitor::DefaultSources(root, *runner_));
    if (!sampler) return sampler.error();
    sampler_ = std::move(*sampler);
    return Status::Ok();
  }
  void Start() override { sampler_->Start(); }
  Status Stop() override { return sampler_->Stop(); }
  Status WriteStats(const std::string& path, bool interrupted) override {
    return sampler_->WriteStats(path, interrupted);
  }
  std::vector<std::string> Notes() const override { return sampler_->notes(); }
  void SetScenario(const std::string& name) override { sampler_->SetScenario(name); }

 private:
  std::unique_ptr<SystemCommandRunner> runner_;
  std::unique_ptr<monitor::Sampler> sampler_;
};

class AppliedTuning final : public SuiteTuning {
 public:
  explicit AppliedTuning(std::unique_ptr<sys::Tuning> tuning) : tuning_(std::move(tuning)) {}
  Status Restore() override { return tuning_->Restore(); }
  void Release() override { tuning_->Release(); }
  nlohmann::json ToJson() const override { return tuning_->ToJson(); }
  std::string Describe() const override { return tuning_->Describe(); }

 private:
  std::unique_ptr<sys::Tuning> tuning_;
};

}  // namespace

Preflight RunPreflight(const sys::CheckContext& context, const std::string& header_line) {
  const sys::ProcessFacts& process = context.process;
  const auto checks = sys::RunChecks(context);
  const sys::CheckSummary counts = sys::Summarise(checks);
  const sys::SystemInfo& info = context.info;
  const sys::CheckHeader header{
      info.nodename, info.release,    info.version,          info.machine,
      info.board,    info.hypervisor, info.preemption_model, !context.root.root().empty()};
  Preflight p;
  p.system = SystemJson(info);
  p.system["checks"] = sys::CheckJson(header, process, checks);
  p.text = header_line + "\n\n" + sys::FormatCheckText(header, checks, true, false);
  p.warnings = sys::EnvironmentWarnings(info);
  for (const auto& c : checks) {
    if (c.status == sys::CheckStatus::kWarn || c.status == sys::CheckStatus::kFail) {
      p.warnings.push_back(
          fmt::format("pre-flight {} {}: {}", sys::StatusName(c.status), c.title, c.found));
    }
    if (c.status == sys::CheckStatus::kFail) {
      p.failures.push_back(
          fmt::format("{}: {}{}", c.title, c.found, c.fix.empty() ? "" : " (fix: " + c.fix + ")"));
    }
  }
  p.pass = counts.pass;
  p.warn = counts.warn;
  p.fail = counts.fail;
  return p;
}

std::unique_ptr<ScenarioLoads> StartableLoads(const Scenario& scenario, const std::string& dir) {
  std::vector<load::LoadSpec> specs = scenario.loads;
  // The runner stops the loads after measuring: they have no duration of their own.
  std::vector<std::string> logs(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].params.duration_ns = 0;
    if (specs[i].name == "cmd") {
      const std::string file = fmt::format("load-{}-cmd.log", i + 1);
      specs[i].params.log_path = dir + "/" + file;
      logs[i] = scenario.name + "/" + file;
    }
  }
  return std::make_unique<LoadSetLoads>(std::move(specs), std::move(logs));
}

Expected<std::unique_ptr<SuiteMonitor>> OpenMonitor(const FsRoot& root, const std::string& csv_path,
                                                    int64_t interval_ns) {
  auto monitor = std::make_unique<SamplerMonitor>(std::make_unique<SystemCommandRunner>());
  if (Status s = monitor->Open(root, csv_path, interval_ns); !s) return s.error();
  return std::unique_ptr<SuiteMonitor>(std::move(monitor));
}

namespace {

/// --tune's options for these CPUs and journal; the callers add what differs.
sys::TuneOptions SuiteTuneOptions(const std::vector<int>& measured_cpus,
                                  const std::vector<int>& online_cpus,
                                  const std::string& journal_path) {
  sys::TuneOptions tune;
  tune.measured_cpus = measured_cpus;
  tune.online_cpus = online_cpus;
  tune.journal_path = journal_path;
  return tune;
}

Expected<std::unique_ptr<SuiteTuning>> ApplySuiteTuneOptions(const FsRoot& root,
                                                             const sys::TuneOptions& tune) {
  auto applied = sys::Tuning::Apply(root, tune);
  if (!applied) return applied.error();
  return std::unique_ptr<SuiteTuning>(std::make_unique<AppliedTuning>(std::move(*applied)));
}

}  // namespace

Expected<std::unique_ptr<SuiteTuning>> ApplyTuning(const FsRoot& root,
                                                   const std::vector<int>& measured_cpus,
                                                   const std::vector<int>& online_cpus,
                                                   bool rt_throttling_off,
                                                   const std::string& journal_path) {
  sys::TuneOptions tune = SuiteTuneOptions(measured_cpus, online_cpus, journal_path);
  tune.rt_throttling_off = rt_throttling_off;
  // The journal sits beside result.json: a guardian that restores for a killed rtpulse marks
  // that result killed.
  if (!journal_path.empty()) {
    tune.after_restore = results::MarkKilledArgs(
        (std::filesystem::path(journal_path).parent_path() / "result.json").string(), ::getpid());
  }
  return ApplySuiteTuneOptions(root, tune);
}

Expected<std::unique_ptr<SuiteTuning>> ApplyKnob(const FsRoot& root, sys::TuneKnob knob,
                                                 const std::vector<int>& measured_cpus,
                                                 const std::vector<int>& online_cpus,
                                                 const std::string& journal_path,
                                                 const std::string& result_path) {
  sys::TuneOptions tune = SuiteTuneOptions(measured_cpus, online_cpus, journal_path);
  tune.only = knob;
  // As for --tune: a guardian that restores the knob for a killed rtpulse marks the result.
  if (!result_path.empty()) tune.after_restore = results::MarkKilledArgs(result_path, ::getpid());
  return ApplySuiteTuneOptions(root, tune);
}

bool SignalPause::StopPending() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  const timespec now{0, 0};
  return sigtimedwait(&stop, nullptr, &now) > 0;
}

bool SignalPause::Wait(int64_t ns, const std::function<void(int64_t)>& tick) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  const int64_t end = MonotonicNs() + ns;
  for (;;) {
    const int64_t left = end - MonotonicNs();
    if (left <= 0) return false;
    if (tick) tick(left);
    const int64_t wait = std::min<int64_t>(left, kNsPerSec);
    const timespec timeout{static_cast<time_t>(wait / kNsPerSec),
                           static_cast<long>(wait % kNsPerSec)};
    if (sigtimedwait(&stop, nullptr, &timeout) > 0) return true;
  }
}

bool StopSignalWithin(int64_t timeout_ns) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  const timespec timeout{static_cast<time_t>(timeout_ns / kNsPerSec),
                         static_cast<long>(timeout_ns % kNsPerSec)};
  const int sig = sigtimedwait(&set, nullptr, &timeout);
  return sig == SIGINT || sig == SIGTERM;
}

Services MachineServices(const SuitePlan& plan, const FsRoot& root, Preflight preflight,
                         Pause& pause, Workload& workload, Progress& progress) {
  Services services;
  services.preflight = [found = std::move(preflight)] { return found; };
  services.monitor = [&root, interval_ns = plan.config.monitor_interval_ns](
                         const std::string& csv) { return OpenMonitor(root, csv, interval_ns); };
  services.loads = [out_dir = plan.out_dir](const Scenario& s) {
    return StartableLoads(s, out_dir + "/" + s.name);
  };
  services.busy = [&root] { return ReadBusy(root); };
  services.pause = &pause;
  services.workload = &workload;
  services.progress = &progress;
  services.realtime_ns = [] { return ClockNs(CLOCK_REALTIME); };
  return services;
}

}  // namespace rtpulse::suite
