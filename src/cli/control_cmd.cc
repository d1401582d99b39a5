// rtpulse control: the periodic flight-control job under scheduling configurations and loads
// (docs/control.md). Options become a suite plan whose scenarios are the configurations and a
// suite::ControlWorkload; the suite runner runs them. --interference runs the contention
// experiment (suite/interference.h) instead. This file parses, checks and prints.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/explain_text.h"
#include "cli/latency_options.h"
#include "cli/live_view.h"
#include "cli/scenario_progress.h"
#include "control/control_loop.h"
#include "control/flight_controller.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/command_runner.h"
#include "core/cpus.h"
#include "core/exit_code.h"
#include "core/file_owner.h"
#include "core/fs_root.h"
#include "core/memory_facts.h"
#include "core/parse.h"
#include "core/timestamp.h"
#include "core/version.h"
#include "load/spec.h"
#include "measure/engine.h"
#include "report/control_figures.h"
#include "results/control_result.h"
#include "results/cyclictest_format.h"
#include "stats/control_cost.h"
#include "suite/control_workload.h"
#include "suite/interference.h"
#include "suite/runner.h"
#include "suite/services.h"
#include "sys/check.h"
#include "sys/process_facts.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

using control::PolicySpec;

struct ControlOptions {
  std::string policy = "fifo:99";
  std::string period = "4ms";
  uint64_t jobs = 10'000;
  bool jobs_given = false;
  std::string deadline;
  std::optional<int> cpu;
  std::string wake = "abs";
  std::string work_set;
  std::string work_set_mode = "streaming";
  std::string exec;
  std::string sweep;
  std::vector<std::string> load;
  bool no_stress = false;
  std::string settle;
  bool interference = false;
  int repetitions = 5;
  std::string out;
  std::string json;
  bool quiet = false;
  std::string checkpoint = "10s";
  std::string inject_exec;
  std::string explain;         ///< --explain US
  std::string explain_events;  ///< --explain-events lean|full ("" = lean)
};

/// The study's stress-ng mix (4 CPUs) scaled to `cpus` online CPUs: per-CPU stressors
/// (cpu, pipe) one per CPU as in the study, the others in the study's proportion (half
/// as many, at least one); --vm-bytes 75 % is of the memory, not per CPU.
std::string StudyStressSpec(size_t cpus) {
  const size_t n = std::max<size_t>(1, cpus);
  const size_t half = std::max<size_t>(1, n / 2);
  return fmt::format(
      "stress-ng:--cpu {} --cpu-method matrixprod --vm {} --vm-bytes 75% --hdd 1 --pipe {} --mq {} "
      "--sock {} --switch {}",
      n, half, n, half, half, half);
}

/// "64M", "32MiB", "1G", "4096" (bytes), "512K": binary units.
Expected<uint64_t> ParseControlBytes(const std::string& option, const std::string& text) {
  const std::string_view t = TrimBlanks(text);
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  std::string_view unit(end, static_cast<size_t>(t.data() + t.size() - end));
  if (ec != std::errc{} || t.empty()) {
    return UsageError(fmt::format(
        "{} '{}' is not a size; give bytes with an optional unit, e.g. 64M, 512K", option, text));
  }
  if (unit.ends_with("iB")) unit.remove_suffix(2);
  if (unit.ends_with("B") && unit.size() > 1) unit.remove_suffix(1);
  uint64_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "K" || unit == "k") scale = 1024;
  if (unit == "M" || unit == "m") scale = 1024 * 1024;
  if (unit == "G" || unit == "g") scale = 1024ULL * 1024 * 1024;
  if (unit == "T" || unit == "t") scale = 1024ULL * 1024 * 1024 * 1024;
  if (scale == 0) {
    return UsageError(
        fmt::format("{} '{}': unknown unit '{}'; use K, M, G or T (e.g. 64M)", option, text, unit));
  }
  return n * scale;
}

Expected<int64_t> ControlTime(const std::string& option, const std::string& text, bool zero_ok) {
  // A control period is milliseconds to most users and seconds to the duration parser: a
  // bare number is refused rather than read as 4 seconds when 4 ms was meant.
  const bool bare =
      !text.empty() && text != "0" && text.find_first_not_of("0123456789.") == std::string::npos;
  if (bare) {
    return UsageError(fmt::format("{} '{}' needs a unit: e.g. {}ms, {}us or {}s", option, text,
                                  text, text, text));
  }
  auto ns = ParseTimeNs(text, kNsPerSec);
  if (!ns) return UsageError(fmt::format("{}: {}", option, ns.error().message));
  if (*ns < 0 || (*ns == 0 && !zero_ok)) {
    return UsageError(fmt::format("{} '{}' must be greater than 0 (e.g. 4ms)", option, text));
  }
  return *ns;
}

Expected<PolicySpec> ControlPolicy(const std::string& text) {
  auto spec = control::ParsePolicySpec(text);
  if (!spec) return spec.error();
  return spec;
}

/// A deadline policy's period must be the control period: the loop waits with sched_yield
/// for the next SCHED_DEADLINE period, which is the release grid.
Status CheckDeadlinePeriod(const PolicySpec& spec, const std::string& text, int64_t period_ns,
                           const std::string& period_text) {
  if (spec.kind != PolicySpec::Kind::kDeadline || spec.period_ns == period_ns) return {};
  PolicySpec fixed = spec;
  fixed.period_ns = period_ns;
  fixed.deadline_ns = std::min(spec.deadline_ns, period_ns);
  return UsageError(fmt::format(
      "--policy '{}': its period {} us differs from --period {} ({} us); the deadline period is "
      "the control period: give --policy {} or --period {}us",
      text, spec.period_ns / kNsPerUs, period_text, period_ns / kNsPerUs,
      control::FormatPolicySpec(fixed), spec.period_ns / kNsPerUs));
}

/// The study's eight configurations at `period_ns`: the deadline ones keep their share of
/// the period (400 us and 800 us of 4 ms: 10 % and 20 %).
std::vector<PolicySpec> PaperPolicies(int64_t period_ns) {
  std::vector<PolicySpec> out;
  const auto add = [&](PolicySpec::Kind kind, int nice, int prio) {
    PolicySpec p;
    p.kind = kind;
    p.nice = nice;
    p.priority = prio;
    out.push_back(p);
  };
  add(PolicySpec::Kind::kOther, 0, 0);
  add(PolicySpec::Kind::kOther, -19, 0);
  add(PolicySpec::Kind::kFifo, 0, 50);
  add(PolicySpec::Kind::kFifo, 0, 99);
  add(PolicySpec::Kind::kRr, 0, 50);
  add(PolicySpec::Kind::kRr, 0, 99);
  for (const int64_t share_pct : {10, 20}) {
    PolicySpec p;
    p.kind = PolicySpec::Kind::kDeadline;
    p.runtime_ns = period_ns * share_pct / 100;
    p.deadline_ns = period_ns;
    p.period_ns = period_ns;
    out.push_back(p);
  }
  return out;
}

/// Everything checked and decided before anything is started or written.
struct ControlPlan {
  suite::SuitePlan suite;
  suite::ControlSettings settings;
  std::string stress_description;
  std::optional<suite::InterferencePlan> interference;
};

Status CheckJobCpu(const ControlOptions& o, const std::vector<int>& online, int& cpu) {
  if (online.empty()) return ResourceError("no online CPU found (/sys/devices/system/cpu/online)");
  cpu = o.cpu.value_or(online.back());
  if (std::find(online.begin(), online.end(), cpu) == online.end()) {
    return UsageError(fmt::format("--cpu {}: CPU {} is not online (online: {}); pick one of them",
                                  cpu, cpu, FormatCpuList(online)));
  }
  return {};
}

Status ParseInjectExec(const std::string& text, suite::ControlSettings& s) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    return UsageError(fmt::format(
        "--inject-exec '{}': give EVERY:EXTRA, e.g. 50:6ms (every 50th job runs 6 ms longer)",
        text));
  }
  auto every = ParseInt(text.substr(0, colon), "--inject-exec EVERY");
  if (!every) return every.error();
  auto extra = ParseTimeNs(text.substr(colon + 1), kNsPerUs);
  if (!extra) return UsageError("--inject-exec: " + extra.error().message);
  if (*every < 1 || *extra <= 0) {
    return UsageError(fmt::format(
        "--inject-exec '{}': EVERY must be at least 1 and EXTRA greater than 0 (e.g. 50:6ms)",
        text));
  }
  s.inject_every = static_cast<uint64_t>(*every);
  s.inject_ns = *extra;
  return {};
}

/// The job's settings shared by every configuration.
Status BuildSettings(const ControlOptions& o, const FsRoot& root, const std::vector<int>& online,
                     suite::ControlSettings& s) {
  auto period = ControlTime("--period", o.period, false);
  if (!period) return period.error();
  s.period_ns = *period;
  if (!o.deadline.empty()) {
    auto deadline = ControlTime("--deadline", o.deadline, false);
    if (!deadline) return deadline.error();
    s.deadline_ns = *deadline;
  }
  if (o.jobs == 0 || o.jobs > control::kMaxJobs) {
    return UsageError(fmt::format("--jobs {}: give 1..{} jobs per configuration (default 10000)",
                                  o.jobs, control::kMaxJobs));
  }
  s.jobs = o.jobs;
  if (Status st = CheckJobCpu(o, online, s.cpu); !st) return st;
  if (o.work_set_mode == "random") {
    s.work_set_mode = control::WorkSetMode::kRandom;
  } else if (o.work_set_mode != "streaming") {
    return UsageError(
        fmt::format("--work-set-mode '{}': use streaming or random", o.work_set_mode));
  }
  if (!o.work_set.empty()) {
    auto bytes = ParseControlBytes("--work-set", o.work_set);
    if (!bytes) return bytes.error();
    s.work_set_bytes = *bytes;
    if (Status fits = control::CheckWorkSetFits(*bytes, root, o.work_set); !fits) return fits;
  }
  if (!o.exec.empty()) {
    auto exec = ParseTimeNs(o.exec, kNsPerUs);
    if (!exec) return UsageError("--exec: " + exec.error().message);
    if (*exec <= 0 || *exec >= s.period_ns) {
      return UsageError(fmt::format(
          "--exec {}: the target execution time must be above 0 and below the period ({} us)",
          o.exec, s.period_ns / kNsPerUs));
    }
    s.exec_ns = *exec;
  }
  if (!o.inject_exec.empty()) {
    if (Status st = ParseInjectExec(o.inject_exec, s); !st) return st;
  }
  auto explain_events = ParseExplainEvents(o.explain_events, !o.explain.empty());
  if (!explain_events) return explain_events.error();
  if (!o.explain.empty()) {
    auto threshold = ParseExplainThresholdNs(o.explain);
    if (!threshold) return threshold.error();
    trace::ExplainPlan explain;
    explain.threshold_ns = *threshold;
    explain.session.cpus = {s.cpu};
    explain.session.tracefs_dir = TracefsDirFromEnv();
    explain.session.events = *explain_events;
    s.explain = std::move(explain);
    s.verdict_line = ExplainVerdictLine;
  }
  return {};
}

/// The configurations of the run: --sweep paper, --sweep paths or --policy alone; each with
/// and without the loads unless --no-stress.
Status BuildConfigurations(const ControlOptions& o, suite::ControlSettings& s) {
  std::vector<PolicySpec> policies;
  std::vector<measure::WakePath> paths;
  auto wake = measure::ParseWakeList(o.wake);
  if (!wake) return wake.error();
  if (o.sweep.empty() || o.sweep == "paths") {
    auto spec = ControlPolicy(o.policy);
    if (!spec) return spec.error();
    if (Status st = CheckDeadlinePeriod(*spec, o.policy, s.period_ns, o.period); !st) return st;
    policies.push_back(*spec);
  }
  if (o.sweep == "paper") {
    policies = PaperPolicies(s.period_ns);
    paths = {wake->front()};
  } else if (o.sweep == "paths") {
    if (policies.front().kind == PolicySpec::Kind::kDeadline) {
      return UsageError(
          "--sweep paths with a deadline policy: SCHED_DEADLINE has one activation path "
          "(sched_yield); give --policy fifo:99 (or other, rr)");
    }
    paths = {measure::WakePath::kAbs, measure::WakePath::kTimerfd, measure::WakePath::kPosix};
  } else if (o.sweep.empty()) {
    if (wake->size() != 1) {
      return UsageError(fmt::format("--wake '{}': give one path (or --sweep paths)", o.wake));
    }
    paths = *wake;
  } else {
    return UsageError(fmt::format("--sweep '{}': use paper or paths", o.sweep));
  }
  for (const PolicySpec& policy : policies) {
    for (const measure::WakePath path : paths) {
      for (const bool loaded : {false, true}) {
        if (loaded && o.no_stress) continue;
        suite::ControlConfiguration c;
        c.policy = policy;
        c.path = path;
        c.loaded = loaded;
        c.scenario = control::PolicySlug(policy) + (loaded ? "-stress" : "");
        if (o.sweep == "paths") c.scenario += "-" + std::string(measure::WakePathName(path));
        c.policy_path = control::FormatPolicySpec(policy);
        if (o.sweep == "paths") c.policy_path += ", " + std::string(measure::WakePathName(path));
        c.configuration = c.policy_path + (loaded ? ", stress" : ", no stress");
        s.configurations.push_back(c);
      }
    }
  }
  return {};
}

/// The loads of a loaded configuration: --load SPECs, or the study's mix scaled here.
Expected<std::vector<load::LoadSpec>> ControlLoads(const ControlOptions& o,
                                                   const std::vector<int>& online,
                                                   std::vector<std::string>& texts) {
  texts = o.load.empty() ? std::vector<std::string>{StudyStressSpec(online.size())} : o.load;
  auto specs = load::ParseLoadSpecs(texts);
  if (!specs) return specs.error();
  texts.clear();
  for (const auto& spec : *specs) texts.push_back(spec.text);
  return specs;
}

Status BuildSuite(const ControlOptions& o, const std::vector<int>& online, ControlPlan& plan) {
  suite::SuitePlan& p = plan.suite;
  p.online = online;
  p.cpus = {plan.settings.cpu};
  auto checkpoint = ControlTime("--checkpoint", o.checkpoint, false);
  if (!checkpoint) return checkpoint.error();
  if (*checkpoint > 10 * kNsPerSec) {
    return UsageError(fmt::format(
        "--checkpoint '{}' is above 10s: a killed run must lose at most 10 s", o.checkpoint));
  }
  p.checkpoint_ns = *checkpoint;
  std::optional<int64_t> settle;
  if (!o.settle.empty()) {
    auto d = ControlTime("--settle", o.settle, true);
    if (!d) return d.error();
    settle = *d;
  }
  std::vector<load::LoadSpec> loads;
  const bool any_loaded =
      std::any_of(plan.settings.configurations.begin(), plan.settings.configurations.end(),
                  [](const suite::ControlConfiguration& c) { return c.loaded; });
  if (any_loaded) {
    auto parsed = ControlLoads(o, online, plan.settings.load_specs);
    if (!parsed) return parsed.error();
    loads = std::move(*parsed);
  } else if (!o.load.empty()) {
    return UsageError("--load with --no-stress: the loads would never run; drop one of them");
  }
  suite::SuiteConfig& c = p.config;
  c.name = "control";
  c.source = "rtpulse control";
  c.description = "the control job under scheduling configurations";
  c.duration_ns = static_cast<int64_t>(plan.settings.jobs) * plan.settings.period_ns;
  c.settle_ns = 0;
  c.interval_ns = plan.settings.period_ns;
  c.monitor_interval_ns = kNsPerSec;
  for (const auto& config : plan.settings.configurations) {
    suite::Scenario s;
    s.name = config.scenario;
    s.description = config.configuration;
    if (config.loaded) {
      s.loads = loads;
      s.load_specs = plan.settings.load_specs;
      s.settle_ns = settle.value_or(kNsPerSec);
    } else {
      s.settle_ns = settle.value_or(0);
    }
    c.scenarios.push_back(std::move(s));
  }
  p.invocation = Invocation();
  p.version = kVersion;
  p.out_dir = o.out.empty() ? "rtpulse_control_" + RunFolderStamp() : o.out;
  return CheckOutputFolder(p.out_dir);
}

Status BuildInterference(const ControlOptions& o, const FsRoot& root,
                         const std::vector<int>& online, ControlPlan& plan) {
  if (!o.sweep.empty()) {
    return UsageError("--interference runs one configuration: drop --sweep");
  }
  if (!o.explain.empty()) {
    return UsageError(
        "--explain explains the control configurations' late jobs; --interference measures "
        "execution times only: drop --explain");
  }
  if (!o.load.empty() || !o.settle.empty()) {
    return UsageError(
        "--interference chooses its own loads per condition (docs/control.md, \"Interference\"): "
        "drop --load and --settle");
  }
  if (o.repetitions < 2 || o.repetitions > 100) {
    return UsageError(fmt::format(
        "--repetitions {}: give 2..100 (interleaved repetitions per condition; default 5)",
        o.repetitions));
  }
  suite::InterferencePlan ip;
  ip.cpu = plan.settings.cpu;
  for (const int cpu : online) {
    if (cpu != ip.cpu) ip.other_cpus.push_back(cpu);
  }
  if (ip.other_cpus.empty()) {
    return ResourceError(
        "--interference needs a second online CPU for the cross-CPU loads; this machine has one");
  }
  ip.jobs_per_run = o.jobs_given ? o.jobs : ip.jobs_per_run;
  ip.repetitions = o.repetitions;
  ip.llc_bytes = LastLevelCacheBytes(root);
  if (plan.settings.work_set_bytes == 0) {
    // Twice the last-level cache, rounded up to whole MiB (8 MiB when it is unknown).
    const size_t mib = 1024 * 1024;
    const size_t want = ip.llc_bytes > 0 ? 2 * ip.llc_bytes : 8 * mib;
    plan.settings.work_set_bytes = (want + mib - 1) / mib * mib;
  } else if (ip.llc_bytes > 0 && plan.settings.work_set_bytes < 2 * ip.llc_bytes) {
    return UsageError(fmt::format(
        "--work-set {} ({} bytes) is below twice the last-level cache ({} KiB here): the job "
        "would run from cache; give at least --work-set {}K or leave it out",
        o.work_set, plan.settings.work_set_bytes, ip.llc_bytes / 1024, 2 * ip.llc_bytes / 1024));
  }
  ip.work_set_bytes = plan.settings.work_set_bytes;
  plan.interference = ip;
  const std::string out = o.out.empty() ? "rtpulse_interference_" + RunFolderStamp() : o.out;
  plan.suite.out_dir = out;
  return CheckOutputFolder(out);
}

Expected<ControlPlan> BuildControlPlan(const ControlOptions& o) {
  ControlPlan plan;
  const FsRoot& root = FsRoot::System();
  const std::vector<int> online = OnlineCpus(root);
  if (Status s = BuildSettings(o, root, online, plan.settings); !s) return s.error();
  if (Status s = BuildConfigurations(o, plan.settings); !s) return s.error();
  if (o.interference) {
    if (Status s = BuildInterference(o, root, online, plan); !s) return s.error();
  } else {
    if (o.repetitions != 5) return UsageError("--repetitions needs --interference");
    if (Status s = BuildSuite(o, online, plan); !s) return s.error();
  }
  if (!o.json.empty() && o.json != "-") {
    if (Status s = CheckWritable(o.json); !s)
      return Error{s.error().code, "--json: " + s.error().message};
  }
  if (plan.settings.exec_ns > 0) {
    // Before any load starts, on the job's CPU: every configuration runs the same work.
    auto calibration = suite::CalibrateOnCpu(plan.settings);
    if (!calibration) return calibration.error();
    plan.settings.calibration = *calibration;
  }
  return plan;
}

/// The control command's progress lines: jobs, max response and deadline misses.
class ControlProgress final : public ScenarioProgress {
 public:
  using ScenarioProgress::ScenarioProgress;

 protected:
  std::string SettlingLine(int64_t left_ns) const override {
    return fmt::format("[{}/{}] {}: loads settling, {} left", index_ + 1, count_, name_,
                       suite::FormatClock(left_ns));
  }
  std::string MeasuringLine(const suite::LiveStatus& s) const override {
    const int64_t left = std::max<int64_t>(0, planned_ns_ - s.elapsed_ns);
    return fmt::format(
        "[{}/{}] {}: jobs {}  max response {}  deadline misses {}   ETA {}  run ETA {}", index_ + 1,
        count_, name_, s.samples, results::HumanNs(static_cast<double>(s.max_ns)), s.missed,
        suite::FormatClock(left), suite::FormatClock(left + after_ns_));
  }
};

/// The summary table, the control cost of each configuration and the JSON document.
nlohmann::json PrintControlSummary(const suite::ControlWorkload& workload, std::FILE* text) {
  std::vector<results::ControlSummaryRow> rows;
  nlohmann::json doc = {{"configurations", nlohmann::json::array()}};
  for (const auto& o : workload.outcomes()) {
    rows.push_back(
        results::SummarizeControlScenario(o.scenario, o.configuration, o.rows, o.skipped));
  }
  std::fputs(results::FormatControlSummary(rows).c_str(), text);
  const stats::ReplaySettings replay;
  fmt::print(text,
             "\nControl cost under the measured timing (docs/control.md, \"Control cost\"):\n{}",
             stats::DescribeReplaySettings(replay));
  for (size_t i = 0; i < workload.outcomes().size(); ++i) {
    const auto& o = workload.outcomes()[i];
    const std::string cost =
        o.cost ? stats::DescribeReplayResult(*o.cost) : "not computed: " + o.cost_error;
    fmt::print(text, "  {}: {}\n", o.scenario, cost);
    const auto& r = rows[i];
    doc["configurations"].push_back(
        {{"scenario", o.scenario},
         {"configuration", o.configuration},
         {"jobs", r.jobs},
         {"releases", o.releases},
         {"skipped", r.skipped},
         {"misses", r.misses},
         {"interrupted", o.interrupted},
         {"mean_response_us", r.mean_response_us},
         {"p99_response_us", r.p99_response_us},
         {"max_response_us", r.max_response_us},
         {"max_latency_us", r.max_latency_us},
         {"median_exec_us", r.median_exec_us},
         {"control_cost", o.cost ? nlohmann::json{{"cost_increase_pct", o.cost->cost_increase_pct},
                                                  {"peak_error_rad", o.cost->peak_error_rad},
                                                  {"worst_stall_ns", o.cost->worst_stall_ns},
                                                  {"outside_model", o.cost->outside_model},
                                                  {"summary", cost}}
                                 : nlohmann::json{{"error", o.cost_error}}}});
  }
  return doc;
}

/// The response-time CDF and box plot of every configuration into RUN/figures; a figure
/// that cannot be drawn (gnuplot missing) is a warning, not a failed run.
void WriteFigures(const std::string& run_dir, const suite::ControlWorkload& workload,
                  nlohmann::json& doc, std::FILE* text) {
  std::vector<report::ControlFigureInput> inputs;
  for (const auto& o : workload.outcomes()) {
    inputs.push_back({o.scenario, o.policy_path, o.loaded, o.rows});
  }
  std::vector<std::string> notes;
  if (Status s = report::WriteControlFigures(run_dir, inputs, {}, &notes); !s) {
    notes.push_back("figures not written: " + s.error().message);
  }
  for (const auto& n : notes) fmt::print(text, "note: {}\n", n);
  doc["figure_notes"] = notes;
}

Status WriteControlJson(const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return {};
  if (path == "-") {
    std::fputs((doc.dump(2) + "\n").c_str(), stdout);
    return {};
  }
  return WriteFileAtomic(path, doc.dump(2) + "\n");
}

int RunInterferenceMode(const ControlOptions& o, ControlPlan& plan) {
  const suite::InterferencePlan& ip = *plan.interference;
  if (Status s = CreateFolders(plan.suite.out_dir); !s) return ReportError(s.error());
  measure::BlockRunSignals();
  std::atomic<bool> stop{false};
  const suite::RunCondition run =
      suite::MakeInterferenceRunner(ip, plan.settings, stop, plan.suite.out_dir);
  if (!o.quiet) {
    fmt::print(stderr,
               "rtpulse: interference: {} conditions x {} repetitions x {} jobs on CPU {}, work "
               "set {} KiB (last-level cache {} KiB)\n",
               ip.conditions.size(), ip.repetitions, ip.jobs_per_run, ip.cpu,
               ip.work_set_bytes / 1024, ip.llc_bytes / 1024);
  }
  auto report = suite::RunInterference(ip, run, stop);
  if (!report) return ReportError(report.error());
  std::FILE* out = o.json == "-" ? stderr : stdout;
  const std::string text = suite::FormatInterference(*report);
  std::fputs(text.c_str(), out);
  nlohmann::json doc = suite::InterferenceToJson(*report);
  doc["rtpulse_version"] = kVersion;
  doc["cmdline"] = Invocation();
  if (plan.settings.calibration) {
    doc["calibration"] = {{"target_ns", plan.settings.exec_ns},
                          {"extra_passes", plan.settings.calibration->passes},
                          {"measured_ns", plan.settings.calibration->measured_ns}};
  }
  int code = report->interrupted ? ToInt(ExitCode::kInterrupted) : ToInt(ExitCode::kOk);
  for (const auto& [file, content] :
       {std::pair{std::string("interference.txt"), text},
        std::pair{std::string("interference.json"), doc.dump(2) + "\n"}}) {
    if (Status s = WriteFileAtomic(plan.suite.out_dir + "/" + file, content); !s) {
      ReportError(s.error());
      code = ToInt(ExitCode::kFailure);
    }
  }
  if (Status s = WriteControlJson(o.json, doc); !s) {
    ReportError(s.error());
    code = ToInt(ExitCode::kFailure);
  }
  fmt::print(out, "results: {}\n", plan.suite.out_dir);
  return code;
}

int RunControl(const ControlOptions& o) {
  auto built = BuildControlPlan(o);
  if (!built) return ReportError(built.error());
  ControlPlan& plan = *built;
  if (plan.interference) return RunInterferenceMode(o, plan);

  const sys::ProcessFacts process = sys::ProbeProcess();
  measure::BlockRunSignals();
  const FsRoot& root = FsRoot::System();
  const SystemCommandRunner commands;
  const sys::CheckContext context(root, commands, process);
  suite::Preflight preflight =
      suite::RunPreflight(context, fmt::format("rtpulse {} control, {}", kVersion, Invocation()));
  suite::ControlWorkload workload(plan.settings, context.info, kVersion, Invocation());
  ControlProgress progress(StderrProgressMode(o.quiet));
  suite::SignalPause pause;

  const suite::Services services =
      suite::MachineServices(plan.suite, root, std::move(preflight), pause, workload, progress);

  const suite::RunOutcome outcome = suite::RunSuite(plan.suite, services);
  if (outcome.result.scenarios.empty() || outcome.result.status == "refused" ||
      outcome.result.status == "running") {
    return ToInt(outcome.code);
  }
  // --json -: the JSON document alone goes to stdout; the text goes to stderr.
  std::FILE* text = o.json == "-" ? stderr : stdout;
  nlohmann::json doc = PrintControlSummary(workload, text);
  WriteFigures(plan.suite.out_dir, workload, doc, text);
  doc["results"] = plan.suite.out_dir;
  doc["status"] = outcome.result.status;
  int code = ToInt(outcome.code);
  if (Status s = WriteControlJson(o.json, doc); !s) {
    ReportError(s.error());
    if (code == 0) code = ToInt(ExitCode::kFailure);
  }
  for (const auto& s : outcome.result.scenarios) {
    if (!s.latency || !s.latency->explain) continue;
    int64_t measured_ns = 0;
    for (const auto& path : s.latency->paths) measured_ns += path.duration_ns;
    fmt::print(text, "\nscenario {}:\n{}", s.name,
               FormatExplainTable(*s.latency->explain, measured_ns));
  }
  for (const auto& w : outcome.result.warnings) fmt::print(text, "warning: {}\n", w);
  fmt::print(text, "results: {}\n", plan.suite.out_dir);
  std::fflush(stdout);
  return code;
}

}  // namespace

Runner SetupControl(CLI::App& sub) {
  auto o = std::make_shared<ControlOptions>();
  sub.add_option("--policy", o->policy,
                 "other:NICE, fifo:PRIO, rr:PRIO or deadline:RUNTIME/DEADLINE/PERIOD (default "
                 "fifo:99)");
  sub.add_option("--period", o->period, "control period (default 4ms: 250 Hz)");
  auto* jobs = sub.add_option("--jobs", o->jobs, "jobs per configuration (default 10000)");
  sub.add_option("--deadline", o->deadline,
                 "a job misses when it ends later than this after its "
                 "release (default: the period)");
  sub.add_option("--cpu", o->cpu, "the job's CPU (default: the last online CPU)");
  sub.add_option("--wake", o->wake,
                 "activation path, as in 'rtpulse latency --wake' (default abs; timerfd, posix, "
                 "...)");
  sub.add_option("--work-set", o->work_set,
                 "memory the job touches every period, e.g. 4M (default none)");
  sub.add_option("--work-set-mode", o->work_set_mode, "streaming (default) or random");
  sub.add_option("--exec", o->exec,
                 "calibrate the job to this execution time here, e.g. 400 (us) or 400us (holds at "
                 "the CPU frequency of the calibration)");
  sub.add_option("--sweep", o->sweep,
                 "paper: the study's 8 configurations x {no stress, stress}; paths: --policy on "
                 "abs, timerfd and posix");
  sub.add_option("--load", o->load,
                 "load SPEC for the stressed configurations, replacing the study's stress-ng mix "
                 "(docs/loads.md); repeatable");
  sub.add_flag("--no-stress", o->no_stress, "only the configurations without load");
  sub.add_option("--settle", o->settle,
                 "loads run this long before the jobs (default 1s with loads, 0 without)");
  sub.add_flag("--interference", o->interference,
               "memory-contention experiment: the job isolated, with a CPU load and a memory load "
               "on the other CPUs, and with a load on its own CPU");
  sub.add_option("--repetitions", o->repetitions,
                 "with --interference: interleaved repetitions per condition (default 5)");
  sub.add_option("-o,--out", o->out, "results folder (default ./rtpulse_control_YYYYMMDD_HHMMSS)");
  sub.add_option("--json", o->json, "also write the summary as JSON to this file ('-': stdout)");
  sub.add_option("--explain", o->explain,
                 "explain every job whose start - release exceeds US (e.g. 200 or 0.2ms) from a "
                 "kernel trace: a verdict line each, the causes in result.json, raw windows in "
                 "<scenario>/explain/ (docs/control.md)");
  sub.add_option("--explain-events", o->explain_events,
                 "with --explain: lean (default: the events the attribution reads) or full "
                 "(every traced event, for the raw windows; costs more; docs/trace.md#events)");
  sub.add_flag("-q,--quiet", o->quiet, "no progress lines; only the final summary");
  sub.add_option("--checkpoint", o->checkpoint,
                 "result.json is rewritten this often while measuring (default 10s, at most 10s)");
  sub.add_option("--inject-exec", o->inject_exec,
                 "test aid: EVERY:EXTRA, every EVERYth job runs EXTRA longer (e.g. 50:6ms), known "
                 "ground truth for misses and skipped releases");
  sub.allow_extras(false);
  sub.footer(
      "Exit codes: 0 every configuration complete, 1 a configuration failed,\n"
      "            2 bad usage or input (nothing run, nothing written), 3 missing privilege or\n"
      "            resource, 130 interrupted (results for what ran are written and marked).\n"
      "Docs: docs/control.md, docs/suite.md, docs/loads.md.");
  return [o, jobs] {
    o->jobs_given = jobs->count() > 0;
    return RunControl(*o);
  };
}

}  // namespace rtpulse::cli
