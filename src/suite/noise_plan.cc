#include "suite/noise_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>
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

/// --explain while the pollers run: each kept event goes to the explainer as a running
/// thread's gap (poller index as the thread, its place in the kept list as the seq), at most
/// `max_per_cpu` of each CPU's.
class NoiseExplainFeed {
 public:
  NoiseExplainFeed(trace::Explainer* explainer, const measure::NoisePlan& plan, size_t max_per_cpu)
      : explainer_(explainer), plan_(plan), max_per_cpu_(max_per_cpu), tids_(plan.cpus.size()) {}

  measure::NoiseWatch Watch() {
    measure::NoiseWatch watch;
    watch.ready = [this](const std::vector<int>& tids) {
      tids_ = tids;
      trace::ProbeThreads threads;
      threads.wake = "noise";
      threads.probe_tids = tids;
      explainer_->SetProbeThreads(threads);
    };
    watch.event = [this](size_t poller, size_t index, const measure::NoiseEvent& e) {
      if (index >= max_per_cpu_) return;
      trace::SpikeInput spike;
      spike.cpu = plan_.cpus[poller];
      spike.thread = static_cast<int>(poller);
      spike.seq = index;
      spike.expected_ns = e.start_ns;
      spike.actual_ns = e.start_ns + e.gap_ns;
      spike.probe_tid = tids_[poller];
      spike.running = true;
      explainer_->OnSpike(spike);
    };
    return watch;
  }

 private:
  trace::Explainer* explainer_;
  const measure::NoisePlan& plan_;
  size_t max_per_cpu_;
  std::vector<int> tids_;
};

/// Each CPU's causes from the explained events (spike.thread = its index in `run.cpus`); the
/// cause rows are trace::Summarise's table of that CPU's explanations.
void FillCauses(trace::ExplainSummary summary, results::NoiseRun& run) {
  std::vector<std::vector<trace::Explanation>> per_cpu(run.cpus.size());
  for (results::NoiseCpu& c : run.cpus) c.causes.emplace();
  for (trace::Explanation& e : summary.explanations) {
    const auto poller = static_cast<size_t>(e.spike.thread);
    if (poller >= run.cpus.size()) continue;
    results::NoiseCpu& cpu = run.cpus[poller];
    results::NoiseCauses& causes = *cpu.causes;
    ++causes.explained;
    causes.explained_ns += e.lateness_ns;
    causes.incomplete += e.complete ? 0 : 1;
    std::array<int64_t, results::kNoiseCauseKinds> kind_ns{};
    for (const trace::Part& part : e.parts) kind_ns[static_cast<size_t>(part.kind)] += part.ns;
    for (size_t k = 0; k < results::kNoiseCauseKinds; ++k) {
      causes.kind_ns[k] += kind_ns[k];
      causes.kind_events[k] += kind_ns[k] > 0 ? 1U : 0U;
    }
    if (e.spike.seq < cpu.kept.size()) {
      results::NoiseEventRow& row = cpu.kept[e.spike.seq];
      row.kind_ns = kind_ns;
      if (!e.parts.empty()) {
        // Largest first; "thread hog 800 rt 99", "irq 11 arch_timer", "unaccounted".
        const trace::Part& top = e.parts.front();
        const std::string kind(results::NoiseCauseKindName(static_cast<size_t>(top.kind)));
        row.largest = top.name.rfind(kind, 0) == 0 ? top.name : kind + " " + top.name;
      }
    }
    per_cpu[poller].push_back(std::move(e));
  }
  for (size_t i = 0; i < run.cpus.size(); ++i) {
    results::NoiseCauses& causes = *run.cpus[i].causes;
    causes.not_explained = run.cpus[i].events - causes.explained;
    for (const trace::CauseRow& r : trace::Summarise(per_cpu[i]).by_time) {
      causes.rows.push_back({std::string(results::NoiseCauseKindName(static_cast<size_t>(r.kind))),
                             r.name, r.total_ns, r.spikes, r.max_ns});
    }
  }
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
  if (request.explain) {
    if (request.explain_max == 0) {
      return UsageError("--explain-max 0: give how many events to attribute per CPU, e.g. 1000");
    }
    trace::ExplainPlan& explain = out.explain.emplace();
    explain.threshold_ns = plan.threshold_ns;  // Every event: a gap above the threshold.
    explain.max_explained = request.explain_max * plan.cpus.size();
    explain.session.cpus = plan.cpus;
    out.explain_max = request.explain_max;
  }
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
  // The trace starts before the pollers, on their CPUs (its threads on the others).
  std::unique_ptr<trace::Explainer> explainer;
  if (planned.explain) explainer = trace::Explainer::Start(*planned.explain, nullptr);
  if (explainer && !explainer->active() && planned.explain_required) {
    const trace::ExplainSummary inactive = explainer->Finish();
    return ResourceError("no kernel trace, so hardware cannot be told from OS noise: " +
                         inactive.unavailable_reason);
  }
  std::optional<NoiseExplainFeed> feed;
  measure::NoiseWatch watch;
  if (explainer && explainer->active()) {
    feed.emplace(explainer.get(), plan, planned.explain_max);
    watch = feed->Watch();
  }
  std::thread runner([&] {
    measured.emplace(measure::RunNoise(plan, stop, feed ? &watch : nullptr));
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire)) {
    if (StopSignalWithin(50 * kNsPerMs)) stop.store(true);
  }
  runner.join();
  // The trace instance goes whatever happened to the run.
  std::optional<trace::ExplainSummary> explained;
  if (explainer) explained = explainer->Finish();
  if (!*measured) return measured->error();
  measure::NoiseRecord& record = **measured;
  results::NoiseRun run;
  run.rtpulse_version = version;
  run.cmdline = invocation;
  run.start_realtime_ns = record.start_realtime_ns;
  run.start_monotonic_ns = record.start_monotonic_ns;
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
    for (const measure::NoiseEvent& e : c.kept) {
      results::NoiseEventRow& row = out.kept.emplace_back();
      row.start_ns = e.start_ns;
      row.gap_ns = e.gap_ns;
    }
    out.events_not_kept = c.events - c.kept.size();
    out.stopped_above = c.stopped_above;
  }
  run.explain = planned.explain.has_value();
  if (explained && explained->active) {
    for (const std::string& note : explained->notes) run.warnings.push_back("explain: " + note);
    FillCauses(std::move(*explained), run);
  } else if (explained) {
    run.warnings.push_back("--explain: no trace, no causes: " + explained->unavailable_reason);
  }
  return run;
}

}  // namespace rtpulse::suite
