#include "suite/control_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/cpus.h"
#include "core/memory_facts.h"
#include "core/parse.h"
#include "core/run_cap.h"
#include "core/timestamp.h"
#include "load/spec.h"
#include "measure/plan.h"
#include "measure/wake_path.h"

namespace rtpulse::suite {
namespace {

using control::PolicySpec;

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

Status CheckJobCpu(const ControlRequest& o, const std::vector<int>& online, int& cpu) {
  if (online.empty()) return ResourceError("no online CPU found (/sys/devices/system/cpu/online)");
  cpu = o.cpu.value_or(online.back());
  if (std::find(online.begin(), online.end(), cpu) == online.end()) {
    return UsageError(fmt::format("--cpu {}: CPU {} is not online (online: {}); pick one of them",
                                  cpu, cpu, FormatCpuList(online)));
  }
  return {};
}

Status ParseInjectExec(const std::string& text, ControlSettings& s) {
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

/// The period, deadline and job count.
Status BuildTiming(const ControlRequest& o, ControlSettings& s) {
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
  return CapRunCount(s.jobs, static_cast<double>(s.period_ns), "--jobs", "jobs", s.notes);
}

/// What the job does every period: its memory, its execution time, the injected overruns.
Status BuildWork(const ControlRequest& o, const FsRoot& root, ControlSettings& s) {
  if (o.work_set_mode == "random") {
    s.work_set_mode = control::WorkSetMode::kRandom;
  } else if (o.work_set_mode != "streaming") {
    return UsageError(
        fmt::format("--work-set-mode '{}': use streaming or random", o.work_set_mode));
  }
  if (!o.work_set.empty()) {
    auto bytes = ParseByteSize("--work-set", o.work_set);
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
  if (!o.inject_exec.empty()) return ParseInjectExec(o.inject_exec, s);
  return {};
}

/// The job's settings shared by every configuration.
Status BuildSettings(const ControlRequest& o, const FsRoot& root, const std::vector<int>& online,
                     ControlSettings& s) {
  if (Status st = BuildTiming(o, s); !st) return st;
  if (Status st = CheckJobCpu(o, online, s.cpu); !st) return st;
  if (Status st = BuildWork(o, root, s); !st) return st;
  if (o.explain) {
    s.explain = *o.explain;
    s.explain->session.cpus = {s.cpu};
    s.verdict_line = o.verdict_line;
  }
  return {};
}

/// The policies and activation paths of --sweep paper, --sweep paths or --policy alone.
Status SweepAxes(const ControlRequest& o, const ControlSettings& s,
                 std::vector<PolicySpec>& policies, std::vector<measure::WakePath>& paths) {
  auto wake = measure::ParseWakeList(o.wake);
  if (!wake) return wake.error();
  if (o.sweep.empty() || o.sweep == "paths") {
    auto spec = control::ParsePolicySpec(o.policy);
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
  return {};
}

/// The configurations of the run: each policy and path with and without the loads unless
/// --no-stress.
Status BuildConfigurations(const ControlRequest& o, ControlSettings& s) {
  std::vector<PolicySpec> policies;
  std::vector<measure::WakePath> paths;
  if (Status st = SweepAxes(o, s, policies, paths); !st) return st;
  for (const PolicySpec& policy : policies) {
    for (const measure::WakePath path : paths) {
      for (const bool loaded : {false, true}) {
        if (loaded && o.no_stress) continue;
        ControlConfiguration c;
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
Expected<std::vector<load::LoadSpec>> ControlLoads(const ControlRequest& o,
                                                   const std::vector<int>& online,
                                                   std::vector<std::string>& texts) {
  texts = o.load.empty() ? std::vector<std::string>{StudyStressSpec(online.size())} : o.load;
  auto specs = load::ParseLoadSpecs(texts);
  if (!specs) return specs.error();
  texts.clear();
  for (const auto& spec : *specs) texts.push_back(spec.text);
  return specs;
}

/// --checkpoint and --settle.
Status BuildPacing(const ControlRequest& o, SuitePlan& p, std::optional<int64_t>& settle) {
  auto checkpoint = ControlTime("--checkpoint", o.checkpoint, false);
  if (!checkpoint) return checkpoint.error();
  if (*checkpoint > 10 * kNsPerSec) {
    return UsageError(fmt::format(
        "--checkpoint '{}' is above 10s: a killed run must lose at most 10 s", o.checkpoint));
  }
  p.checkpoint_ns = *checkpoint;
  if (!o.settle.empty()) {
    auto d = ControlTime("--settle", o.settle, true);
    if (!d) return d.error();
    settle = *d;
  }
  return {};
}

Status BuildSuite(const ControlRequest& o, const std::vector<int>& online, ControlPlan& plan) {
  SuitePlan& p = plan.suite;
  p.online = online;
  p.cpus = {plan.settings.cpu};
  std::optional<int64_t> settle;
  if (Status st = BuildPacing(o, p, settle); !st) return st;
  std::vector<load::LoadSpec> loads;
  const bool any_loaded =
      std::any_of(plan.settings.configurations.begin(), plan.settings.configurations.end(),
                  [](const ControlConfiguration& c) { return c.loaded; });
  if (any_loaded) {
    auto parsed = ControlLoads(o, online, plan.settings.load_specs);
    if (!parsed) return parsed.error();
    loads = std::move(*parsed);
  } else if (!o.load.empty()) {
    return UsageError("--load with --no-stress: the loads would never run; drop one of them");
  }
  SuiteConfig& c = p.config;
  c.name = "control";
  c.source = "rtpulse control";
  c.description = "the control job under scheduling configurations";
  c.duration_ns = static_cast<int64_t>(plan.settings.jobs) * plan.settings.period_ns;
  c.settle_ns = 0;
  c.interval_ns = plan.settings.period_ns;
  c.monitor_interval_ns = kNsPerSec;
  for (const auto& config : plan.settings.configurations) {
    c.scenarios.push_back(ConfigurationScenario(config.scenario, config.configuration,
                                                config.loaded, loads, plan.settings.load_specs,
                                                settle.value_or(config.loaded ? kNsPerSec : 0)));
  }
  p.invocation = o.invocation;
  p.version = o.version;
  p.out_dir = o.out.empty() ? "rtpulse_control_" + RunFolderStamp() : o.out;
  return CheckOutputFolder(p.out_dir);
}

/// What --interference does not combine with, and its repetitions.
Status CheckInterferenceOptions(const ControlRequest& o) {
  if (!o.sweep.empty()) {
    return UsageError("--interference runs one configuration: drop --sweep");
  }
  if (o.explain) {
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
  return {};
}

Status BuildInterference(const ControlRequest& o, const FsRoot& root,
                         const std::vector<int>& online, ControlPlan& plan) {
  if (Status st = CheckInterferenceOptions(o); !st) return st;
  InterferencePlan ip;
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

}  // namespace

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

std::string StudyStressSpec(size_t cpus) {
  // Per-CPU stressors (cpu, pipe) one per CPU as in the study, the others in the study's
  // proportion (half as many, at least one); --vm-bytes 75 % is of the memory, not per CPU.
  const size_t n = std::max<size_t>(1, cpus);
  const size_t half = std::max<size_t>(1, n / 2);
  return fmt::format(
      "stress-ng:--cpu {} --cpu-method matrixprod --vm {} --vm-bytes 75% --hdd 1 --pipe {} --mq {} "
      "--sock {} --switch {}",
      n, half, n, half, half, half);
}

std::vector<PolicySpec> PaperPolicies(int64_t period_ns) {
  // The deadline configurations keep their share of the period (400 us and 800 us of 4 ms:
  // 10 % and 20 %).
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

Expected<ControlPlan> BuildControlPlan(const ControlRequest& request, const FsRoot& root) {
  ControlPlan plan;
  const std::vector<int> online = OnlineCpus(root);
  if (Status s = BuildSettings(request, root, online, plan.settings); !s) return s.error();
  if (Status s = BuildConfigurations(request, plan.settings); !s) return s.error();
  if (request.interference) {
    if (Status s = BuildInterference(request, root, online, plan); !s) return s.error();
  } else {
    if (request.repetitions != 5) return UsageError("--repetitions needs --interference");
    if (Status s = BuildSuite(request, online, plan); !s) return s.error();
  }
  return plan;
}

}  // namespace rtpulse::suite
