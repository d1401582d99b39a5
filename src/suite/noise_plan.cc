#include "suite/noise_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "core/clock.h"
#include "core/cpus.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/rt_bandwidth.h"
#include "suite/services.h"

namespace rtpulse::suite {
namespace {

Expected<std::vector<int>> PlanCpus(const NoiseRequest& r, const std::vector<int>& online) {
  if (r.cpus.empty()) {
    std::vector<int> cpus = online;
    // CPU 0 keeps the system and rtpulse's own thread, as oslat's main thread does.
    if (cpus.size() > 1) std::erase(cpus, 0);
    return cpus;
  }
  auto cpus = ParseCpuList(r.cpus);
  if (!cpus) return UsageError("-c " + Printable(r.cpus) + ": " + cpus.error().message);
  for (const int cpu : *cpus) {
    if (std::find(online.begin(), online.end(), cpu) == online.end()) {
      return UsageError(
          fmt::format("-c {}: CPU {} is not online (online: {}); give CPUs from those",
                      Printable(r.cpus), cpu, FormatCpuList(online)));
    }
  }
  return *cpus;
}

/// "fifo:95", "rr:10", "other": the policy and its priority.
Status PlanPolicy(const NoiseRequest& r, measure::NoisePlan& plan) {
  if (r.rtprio) {
    if (r.policy_given) return UsageError("-f and --policy both set the policy: give one");
    plan.policy = SchedPolicy::kFifo;
    plan.priority = *r.rtprio;
    if (plan.priority < 1 || plan.priority > 99) {
      return UsageError(fmt::format("-f {}: SCHED_FIFO takes 1..99", plan.priority));
    }
    return Status::Ok();
  }
  const size_t colon = r.policy.find(':');
  const std::string name = r.policy.substr(0, colon);
  const auto policy = SchedPolicyFromName(name);
  if (!policy) {
    return UsageError(fmt::format("--policy {}: give other, batch, idle, fifo:N or rr:N (N 1..99)",
                                  Printable(r.policy)));
  }
  plan.policy = *policy;
  plan.priority = 0;
  if (IsRealtime(*policy)) {
    auto priority =
        ParseInt(colon == std::string::npos ? "" : r.policy.substr(colon + 1), "priority");
    if (!priority || *priority < 1 || *priority > 99) {
      return UsageError(fmt::format("--policy {}: {} needs a priority 1..99, e.g. {}:95",
                                    Printable(r.policy), name, name));
    }
    plan.priority = static_cast<int>(*priority);
  } else if (colon != std::string::npos) {
    return UsageError(fmt::format("--policy {}: {} takes no priority", Printable(r.policy), name));
  }
  return Status::Ok();
}

/// A time with its unit ("5us", "1000ns"): a bare number would be ambiguous, so it is refused.
Expected<int64_t> TimeWithUnit(std::string_view option, const std::string& text) {
  auto ns = ParseTimeNs(text);
  if (!ns || *ns <= 0) {
    return UsageError(fmt::format("{} {}: give a time above 0 with its unit, e.g. 5us or 500ns",
                                  option, Printable(text)));
  }
  return *ns;
}

/// What RT throttling does to a poller of a real-time policy, when it is on.
std::optional<std::string> ThrottlingNote(const FsRoot& root, const measure::NoisePlan& plan) {
  if (!IsRealtime(plan.policy)) return std::nullopt;
  const std::optional<RtBandwidth> b = ReadRtBandwidth(root);
  if (!b || !b->Throttles()) return std::nullopt;
  return fmt::format(
      "RT throttling is on (kernel.sched_rt_runtime_us {} of {}): a {} poller that never sleeps "
      "may be stopped for up to {} us every {} us, and this run counts that as noise; measure "
      "with --policy other, or set kernel.sched_rt_runtime_us = -1 for the run (rtpulse check "
      "says more)",
      b->runtime_us, b->period_us, SchedPolicyName(plan.policy), b->period_us - b->runtime_us,
      b->period_us);
}

}  // namespace

Expected<NoisePlanned> BuildNoisePlan(const NoiseRequest& request, const FsRoot& root) {
  NoisePlanned out;
  measure::NoisePlan& plan = out.plan;
  const std::vector<int> online = OnlineCpus(root);
  auto cpus = PlanCpus(request, online);
  if (!cpus) return cpus.error();
  plan.cpus = std::move(*cpus);
  auto duration = ParseDurationNs(request.duration);
  if (!duration)
    return UsageError("-D " + Printable(request.duration) + ": " + duration.error().message);
  plan.duration_ns = *duration;
  if (Status s = PlanPolicy(request, plan); !s) return s.error();
  auto threshold = TimeWithUnit("--threshold", request.threshold);
  if (!threshold) return threshold.error();
  plan.threshold_ns = *threshold;
  auto width = TimeWithUnit("-W", request.bucket_width);
  if (!width) return width.error();
  plan.bucket_width_ns = *width;
  if (request.buckets < 4 || request.buckets > 1024) {
    return UsageError(fmt::format("-b {}: give 4..1024 buckets", request.buckets));
  }
  plan.buckets = request.buckets;
  if (!request.stop_above.empty()) {
    auto us = ParseInt(request.stop_above, "-T");
    if (!us || *us <= 0) {
      return UsageError(fmt::format("-T {}: give the gap that stops the run in whole us, e.g. 100",
                                    Printable(request.stop_above)));
    }
    plan.stop_above_ns = *us * kNsPerUs;
  }
  plan.events_kept = request.events_kept;
  if (Status s = measure::CheckNoisePlan(plan); !s) return s.error();
  if (auto note = ThrottlingNote(root, plan)) out.notes.push_back(*note);
  if (IsRealtime(plan.policy) && plan.cpus.size() >= online.size()) {
    out.notes.push_back(
        "every online CPU runs a real-time poller that never sleeps: the rest of the system, "
        "rtpulse's own thread included, gets only what RT throttling leaves");
  }
  return out;
}

Expected<results::NoiseRun> MeasureNoise(const NoisePlanned& planned, const sys::SystemInfo& info,
                                         const std::string& invocation,
                                         const std::string& version) {
  const measure::NoisePlan& plan = planned.plan;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  std::optional<Expected<measure::NoiseRecord>> measured;
  // CPU 0 (or whatever the pollers leave) takes the signals while they run.
  LeaveMeasuredCpus(plan.cpus);
  std::thread runner([&] {
    measured.emplace(measure::RunNoise(plan, stop));
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire)) {
    if (StopSignalWithin(50 * kNsPerMs)) stop.store(true);
  }
  runner.join();
  if (!*measured) return measured->error();
  measure::NoiseRecord& record = **measured;
  results::NoiseRun run;
  run.rtpulse_version = version;
  run.cmdline = invocation;
  run.start_realtime_ns = record.start_realtime_ns;
  run.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  run.policy = SchedPolicyName(plan.policy);
  run.priority = plan.priority;
  run.threshold_ns = plan.threshold_ns;
  run.bucket_width_ns = plan.bucket_width_ns;
  run.duration_planned_ns = plan.duration_ns;
  run.stop_above_ns = plan.stop_above_ns;
  run.interrupted = record.interrupted;
  run.kernel = info.release + " " + info.version;
  run.machine = info.machine;
  run.realtime_kernel = info.preempt_rt;
  run.warnings = sys::EnvironmentWarnings(info);
  run.warnings.insert(run.warnings.end(), planned.notes.begin(), planned.notes.end());
  run.warnings.insert(run.warnings.end(), record.warnings.begin(), record.warnings.end());
  for (measure::NoiseCpuRecord& c : record.cpus) {
    results::NoiseCpu& out = run.cpus.emplace_back();
    out.cpu = c.cpu;
    out.tid = c.tid;
    out.duration_ns = c.end_ns - c.start_ns;
    out.gaps = c.reads;
    out.min_gap_ns = c.min_gap_ns;
    out.max_gap_ns = c.max_gap_ns;
    out.histogram = std::move(c.histogram);
    out.events = c.events;
    out.noise_ns = c.noise_ns;
    out.kept.reserve(c.kept.size());
    for (const measure::NoiseEvent& e : c.kept) out.kept.push_back({e.start_ns, e.gap_ns});
    out.events_not_kept = c.events - c.kept.size();
    out.stopped_above = c.stopped_above;
  }
  return run;
}

}  // namespace rtpulse::suite
