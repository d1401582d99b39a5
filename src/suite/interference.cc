#include "suite/interference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/parse.h"
#include "results/json_fields.h"

namespace rtpulse::suite {
namespace {

using measure::CounterReading;

double InterferenceMedian(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? static_cast<double>(v[n / 2])
                    : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
}

bool InterferenceHasCondition(const InterferencePlan& plan, InterferenceCondition c) {
  return std::find(plan.conditions.begin(), plan.conditions.end(), c) != plan.conditions.end();
}

/// Counters summed over runs: a counter is supported only if every run had it.
std::vector<CounterReading> InterferenceSumCounters(const std::vector<const RunSummary*>& runs) {
  std::vector<CounterReading> sum;
  for (const measure::Counter counter : measure::kAllCounters) {
    CounterReading total;
    total.counter = counter;
    total.supported = !runs.empty();
    if (runs.empty()) total.unsupported = "no run measured";
    int have = 0;
    for (const RunSummary* run : runs) {
      const auto it = std::find_if(run->counters.begin(), run->counters.end(),
                                   [&](const CounterReading& r) { return r.counter == counter; });
      if (it == run->counters.end() || !it->supported) {
        if (total.supported) {
          total.unsupported = it == run->counters.end() ? "not read in this run" : it->unsupported;
        }
        total.supported = false;
        continue;
      }
      ++have;
      total.value += it->value;
      total.multiplexed = total.multiplexed || it->multiplexed;
      total.user_only = total.user_only || it->user_only;
    }
    if (!total.supported) {
      if (have > 0) {
        total.unsupported =
            fmt::format("counted in only {} of {} runs ({})", have, runs.size(), total.unsupported);
      }
      total.value = 0;
      total.multiplexed = false;
      total.user_only = false;
    }
    sum.push_back(std::move(total));
  }
  return sum;
}

ConditionResult InterferenceSummarise(InterferenceCondition condition,
                                      const std::vector<RunSummary>& runs,
                                      const std::vector<std::vector<int64_t>>& pooled_by_condition,
                                      const std::vector<double>& isolated_medians_ns) {
  ConditionResult out;
  out.condition = condition;
  std::vector<const RunSummary*> measured;
  for (const RunSummary& run : runs) {
    if (run.condition != condition) continue;
    if (!run.measured) {
      ++out.failed_runs;
      continue;
    }
    ++out.runs;
    out.jobs += run.jobs;
    out.repetition_medians_ns.push_back(run.median_exec_ns);
    measured.push_back(&run);
  }
  const auto& pooled = pooled_by_condition[static_cast<size_t>(condition)];
  out.median_exec_ns = InterferenceMedian(pooled);
  out.counters = InterferenceSumCounters(measured);
  for (const CounterReading& c : out.counters) {
    out.counters_per_job.push_back(c.supported && out.jobs > 0 ? static_cast<double>(c.value) /
                                                                     static_cast<double>(out.jobs)
                                                               : 0.0);
  }
  if (condition == InterferenceCondition::kIsolated) {
    out.no_inflation = "the baseline";
  } else if (auto inflation =
                 stats::RepetitionInflation(isolated_medians_ns, out.repetition_medians_ns);
             inflation) {
    out.has_inflation = true;
    out.inflation = *inflation;
  } else {
    out.no_inflation = inflation.error().message;
  }
  return out;
}

const ConditionResult* InterferenceFindCondition(const InterferenceReport& report,
                                                 InterferenceCondition c) {
  for (const auto& r : report.conditions) {
    if (r.condition == c && r.has_inflation) return &r;
  }
  return nullptr;
}

bool InterferenceUp(const ConditionResult* r) {
  return r != nullptr && r->inflation.ci_low_pct > 0;
}
bool InterferenceDown(const ConditionResult* r) {
  return r != nullptr && r->inflation.ci_high_pct < 0;
}
std::string InterferencePct(const ConditionResult* r) {
  return stats::FormatInflation(r->inflation);
}

/// The cross-CPU part of the verdict (memory-other against cpu-other), or "" when neither is
/// above 0.
std::string InterferenceCrossCpuVerdict(const ConditionResult* memory, const ConditionResult* cpu) {
  if (memory != nullptr && cpu == nullptr) {
    if (!InterferenceUp(memory)) return "";
    return fmt::format(
        "exec time {} with memory traffic on other CPUs (no CPU-only condition was run, so it "
        "is not separated from load on other CPUs as such)",
        InterferencePct(memory));
  }
  if (memory == nullptr && cpu != nullptr) {
    if (!InterferenceUp(cpu)) return "";
    return fmt::format(
        "exec time {} with CPU-only load on the other CPUs: load elsewhere slows the job "
        "(shared clock or power, or the hypervisor)",
        InterferencePct(cpu));
  }
  if (memory == nullptr || (!InterferenceUp(memory) && !InterferenceUp(cpu))) return "";
  const bool separated = memory->inflation.ci_low_pct > cpu->inflation.ci_high_pct;
  const std::string numbers =
      fmt::format("exec time {} with memory traffic on other CPUs, {} with CPU-only load there",
                  InterferencePct(memory), InterferencePct(cpu));
  if (InterferenceUp(memory) && separated && !InterferenceUp(cpu)) {
    return numbers + ": contention in the shared memory system, not scheduling";
  }
  if (InterferenceUp(memory) && separated) {
    return numbers +
           ": mostly contention in the shared memory system, plus a slow-down from any load on "
           "the other CPUs (shared clock or power, or the hypervisor)";
  }
  if (InterferenceUp(memory) && InterferenceUp(cpu)) {
    return numbers +
           ": any load on the other CPUs slows the job, memory traffic no more than CPU-only "
           "load (shared clock or power, or the hypervisor; not the memory system in "
           "particular)";
  }
  if (InterferenceUp(memory)) {
    return numbers +
           ": probably contention in the shared memory system, but the two intervals overlap; "
           "more repetitions or jobs would separate them";
  }
  return numbers +
         ": CPU-only load on the other CPUs slows the job and memory traffic does not (shared "
         "clock or power, or the hypervisor)";
}

}  // namespace

std::string_view ConditionName(InterferenceCondition condition) {
  switch (condition) {
    case InterferenceCondition::kIsolated:
      return "isolated";
    case InterferenceCondition::kCpuOther:
      return "cpu-other";
    case InterferenceCondition::kMemoryOther:
      return "memory-other";
    case InterferenceCondition::kOwnCpu:
      return "own-cpu";
  }
  return "unknown";
}

std::string_view ConditionDescription(InterferenceCondition condition) {
  switch (condition) {
    case InterferenceCondition::kIsolated:
      return "no load: the job alone";
    case InterferenceCondition::kCpuOther:
      return "CPU-only load on the other CPUs";
    case InterferenceCondition::kMemoryOther:
      return "memory-bandwidth load on the other CPUs";
    case InterferenceCondition::kOwnCpu:
      return "CPU-only load on the job's own CPU";
  }
  return "unknown";
}

Status ValidateInterferencePlan(const InterferencePlan& plan) {
  if (plan.conditions.empty()) {
    return UsageError("no interference conditions; give at least isolated and one other");
  }
  for (size_t i = 0; i < plan.conditions.size(); ++i) {
    for (size_t j = i + 1; j < plan.conditions.size(); ++j) {
      if (plan.conditions[i] == plan.conditions[j]) {
        return UsageError(fmt::format("interference condition '{}' is given twice; give each once",
                                      ConditionName(plan.conditions[i])));
      }
    }
  }
  if (!InterferenceHasCondition(plan, InterferenceCondition::kIsolated)) {
    return UsageError(
        "the interference conditions have no 'isolated' baseline; every inflation is against "
        "it, so add it");
  }
  if (plan.other_cpus.empty()) {
    return UsageError(fmt::format(
        "no other CPUs for the cross-CPU loads (the job is on CPU {}); --interference needs at "
        "least two CPUs",
        plan.cpu));
  }
  if (std::find(plan.other_cpus.begin(), plan.other_cpus.end(), plan.cpu) !=
      plan.other_cpus.end()) {
    return UsageError(
        fmt::format("the other CPUs ({}) include the job's CPU {}; give them without it",
                    FormatCpuList(plan.other_cpus), plan.cpu));
  }
  if (plan.repetitions < 1) {
    return UsageError(fmt::format("{} repetitions; give at least 1 (5 or more for stable medians)",
                                  plan.repetitions));
  }
  if (plan.jobs_per_run < 10) {
    return UsageError(
        fmt::format("{} jobs per run; the inflation interval needs at least 10 (give e.g. 2500)",
                    plan.jobs_per_run));
  }
  if (plan.llc_bytes > 0 && plan.work_set_bytes < 2 * plan.llc_bytes) {
    return UsageError(fmt::format(
        "work set {} KiB is less than twice the last-level cache ({} KiB): the job would run "
        "from cache and not show memory contention; give --work-set {}K or more",
        plan.work_set_bytes / 1024, plan.llc_bytes / 1024, 2 * plan.llc_bytes / 1024));
  }
  return Status::Ok();
}

std::vector<std::string> ConditionLoads(InterferenceCondition condition,
                                        const InterferencePlan& plan) {
  const std::string others = FormatCpuList(plan.other_cpus);
  switch (condition) {
    case InterferenceCondition::kIsolated:
      return {};
    case InterferenceCondition::kCpuOther:
      return {"cpu:cpus=" + others};
    case InterferenceCondition::kMemoryOther: {
      constexpr size_t kMiB = 1024 * 1024;
      const size_t mb = std::max<size_t>(64, (4 * plan.llc_bytes + kMiB - 1) / kMiB);
      return {fmt::format("memory:cpus={},mb={}", others, mb)};
    }
    case InterferenceCondition::kOwnCpu:
      return {fmt::format("cpu:cpus={}", plan.cpu)};
  }
  return {};
}

std::vector<std::pair<InterferenceCondition, int>> InterferenceOrder(const InterferencePlan& plan) {
  std::vector<std::pair<InterferenceCondition, int>> order;
  const size_t m = plan.conditions.size();
  if (m == 0) return order;
  for (int rep = 1; rep <= plan.repetitions; ++rep) {
    for (size_t i = 0; i < m; ++i) {
      order.emplace_back(plan.conditions[(i + static_cast<size_t>(rep - 1)) % m], rep);
    }
  }
  return order;
}

InterferenceRun InterferenceRunFromRecord(InterferenceCondition condition, int repetition,
                                          const control::ControlRunRecord& record,
                                          std::vector<measure::CounterReading> counters) {
  InterferenceRun run;
  run.condition = condition;
  run.repetition = repetition;
  run.exec_ns.reserve(record.jobs.size());
  for (const control::JobTiming& job : record.jobs)
    run.exec_ns.push_back(job.end_ns - job.start_ns);
  run.counters = std::move(counters);
  run.warnings = record.warnings;
  if (record.degraded) {
    run.warnings.emplace_back("the real-time set-up was degraded (see the warnings above)");
  }
  if (record.interrupted) {
    run.warnings.push_back(
        fmt::format("the loop was interrupted after {} jobs", record.jobs.size()));
  }
  return run;
}

Expected<InterferenceReport> RunInterference(const InterferencePlan& plan, const RunCondition& run,
                                             const std::atomic<bool>& stop) {
  if (Status s = ValidateInterferencePlan(plan); !s) return s.error();
  InterferenceReport report;
  report.plan = plan;
  const auto order = InterferenceOrder(plan);
  report.planned_runs = static_cast<int>(order.size());
  std::vector<std::vector<int64_t>> pooled(4);
  std::optional<Error> first_error;
  for (const auto& [condition, repetition] : order) {
    if (stop.load()) {
      report.interrupted = true;
      break;
    }
    RunSummary summary;
    summary.condition = condition;
    summary.repetition = repetition;
    auto measured = run(condition, repetition);
    if (!measured) {
      summary.error = measured.error().message;
      if (!first_error) first_error = measured.error();
      report.warnings.push_back(fmt::format("run {} of {} ({}, repetition {}) failed: {}",
                                            report.runs.size() + 1, order.size(),
                                            ConditionName(condition), repetition, summary.error));
    } else if (measured->exec_ns.empty()) {
      summary.error = "no job completed";
      report.warnings.push_back(fmt::format("run {} of {} ({}, repetition {}) measured no job",
                                            report.runs.size() + 1, order.size(),
                                            ConditionName(condition), repetition));
    } else {
      summary.measured = true;
      summary.jobs = measured->exec_ns.size();
      summary.median_exec_ns = InterferenceMedian(measured->exec_ns);
      summary.counters = std::move(measured->counters);
      summary.warnings = measured->warnings;
      for (const auto& w : measured->warnings) {
        report.warnings.push_back(
            fmt::format("{}, repetition {}: {}", ConditionName(condition), repetition, w));
      }
      auto& pool = pooled[static_cast<size_t>(condition)];
      pool.insert(pool.end(), measured->exec_ns.begin(), measured->exec_ns.end());
    }
    report.runs.push_back(std::move(summary));
  }
  const bool any_measured = std::any_of(report.runs.begin(), report.runs.end(),
                                        [](const RunSummary& r) { return r.measured; });
  if (!any_measured && first_error) return *first_error;
  // The inflation's unit is the repetition: each measured isolated run's median.
  std::vector<double> isolated;
  for (const RunSummary& summary : report.runs) {
    if (summary.condition == InterferenceCondition::kIsolated && summary.measured) {
      isolated.push_back(summary.median_exec_ns);
    }
  }
  for (const InterferenceCondition c : plan.conditions) {
    report.conditions.push_back(InterferenceSummarise(c, report.runs, pooled, isolated));
  }
  report.verdict = InterferenceVerdict(report);
  return report;
}

std::string InterferenceVerdict(const InterferenceReport& report) {
  const ConditionResult* memory =
      InterferenceFindCondition(report, InterferenceCondition::kMemoryOther);
  const ConditionResult* cpu = InterferenceFindCondition(report, InterferenceCondition::kCpuOther);
  const ConditionResult* own = InterferenceFindCondition(report, InterferenceCondition::kOwnCpu);
  std::string prefix;
  if (report.interrupted || static_cast<int>(report.runs.size()) < report.planned_runs) {
    prefix = fmt::format("partial ({} of {} runs): ", report.runs.size(), report.planned_runs);
  }
  if (memory == nullptr && cpu == nullptr && own == nullptr) {
    return prefix +
           "nothing to compare: no condition has an inflation against the isolated baseline "
           "(see the table for why)";
  }
  std::vector<std::string> parts;
  const std::string cross = InterferenceCrossCpuVerdict(memory, cpu);
  if (!cross.empty()) parts.push_back(cross);
  if (InterferenceUp(own)) {
    if (cross.empty()) {
      std::string others;
      if (memory != nullptr) others += fmt::format("memory traffic {}", InterferencePct(memory));
      if (cpu != nullptr) {
        others += fmt::format("{}CPU-only {}", others.empty() ? "" : ", ", InterferencePct(cpu));
      }
      parts.push_back(fmt::format(
          "exec time {} with load on its own CPU, nothing measurable from load on the other "
          "CPUs{}: scheduling on its own CPU (preemption inside the job, or cache sharing), "
          "not the shared memory system",
          InterferencePct(own), others.empty() ? "" : " (" + others + ")"));
    } else {
      parts.push_back(fmt::format(
          "{} with load on its own CPU: scheduling on its own CPU adds to it (preemption "
          "inside the job, or cache sharing)",
          InterferencePct(own)));
    }
  }
  for (const ConditionResult* r : {memory, cpu, own}) {
    if (InterferenceDown(r)) {
      parts.push_back(
          fmt::format("exec time {} with {}: faster than isolated: a busy machine "
                      "keeps its CPUs out of deep idle states and at higher clocks (in a VM, the "
                      "vCPU stays scheduled)",
                      InterferencePct(r), ConditionDescription(r->condition)));
    }
  }
  if (parts.empty()) {
    std::vector<std::string> each;
    for (const ConditionResult* r : {memory, cpu, own}) {
      if (r != nullptr)
        each.push_back(fmt::format("{} {}", ConditionName(r->condition), InterferencePct(r)));
    }
    return prefix + fmt::format("no measurable effect: every interval contains 0 ({})",
                                fmt::join(each, ", "));
  }
  return prefix + fmt::format("{}", fmt::join(parts, "; "));
}

namespace {

nlohmann::json InterferenceCounterJson(const CounterReading& c, std::optional<double> per_job) {
  nlohmann::json j = {{"name", std::string(measure::CounterName(c.counter))},
                      {"supported", c.supported}};
  if (c.supported) {
    j["value"] = c.value;
    if (per_job) j["per_job"] = *per_job;
    j["multiplexed"] = c.multiplexed;
    j["user_only"] = c.user_only;
  } else {
    j["value"] = nullptr;
    if (per_job) j["per_job"] = nullptr;
    j["unsupported"] = c.unsupported;
  }
  return j;
}

}  // namespace

nlohmann::json InterferenceToJson(const InterferenceReport& report) {
  const InterferencePlan& p = report.plan;
  nlohmann::json plan = {{"cpu", p.cpu},
                         {"other_cpus", p.other_cpus},
                         {"jobs_per_run", p.jobs_per_run},
                         {"repetitions", p.repetitions},
                         {"work_set_bytes", p.work_set_bytes},
                         {"llc_bytes", p.llc_bytes},
                         {"conditions", nlohmann::json::array()},
                         {"loads", nlohmann::json::object()}};
  for (const auto c : p.conditions) {
    plan["conditions"].push_back(std::string(ConditionName(c)));
    plan["loads"][std::string(ConditionName(c))] = ConditionLoads(c, p);
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const RunSummary& r : report.runs) {
    nlohmann::json j = {{"condition", std::string(ConditionName(r.condition))},
                        {"repetition", r.repetition},
                        {"measured", r.measured}};
    if (r.measured) {
      j["jobs"] = r.jobs;
      j["median_exec_ns"] = r.median_exec_ns;
      j["counters"] = nlohmann::json::array();
      for (const auto& c : r.counters)
        j["counters"].push_back(InterferenceCounterJson(c, std::nullopt));
      j["warnings"] = r.warnings;
    } else {
      j["error"] = r.error;
    }
    runs.push_back(std::move(j));
  }
  nlohmann::json conditions = nlohmann::json::array();
  for (const ConditionResult& c : report.conditions) {
    nlohmann::json j = {{"name", std::string(ConditionName(c.condition))},
                        {"description", std::string(ConditionDescription(c.condition))},
                        {"runs", c.runs},
                        {"failed_runs", c.failed_runs},
                        {"jobs", c.jobs},
                        {"repetition_medians_ns", c.repetition_medians_ns},
                        {"median_exec_ns",
                         c.jobs > 0 ? nlohmann::json(c.median_exec_ns) : nlohmann::json(nullptr)}};
    if (c.has_inflation) {
      const auto& i = c.inflation;
      j["inflation"] = {{"pct", i.pct},
                        {"ci_low_pct", i.ci_low_pct},
                        {"ci_high_pct", i.ci_high_pct},
                        {"confidence", i.confidence},
                        {"base_median_ns", i.base_median_ns},
                        {"cond_median_ns", i.cond_median_ns},
                        {"base_n", i.base_n},
                        {"cond_n", i.cond_n},
                        {"df", i.df}};
    } else {
      j["inflation"] = nullptr;
      j["no_inflation"] = c.no_inflation;
    }
    j["counters"] = nlohmann::json::array();
    for (size_t k = 0; k < c.counters.size(); ++k) {
      j["counters"].push_back(InterferenceCounterJson(c.counters[k], c.counters_per_job[k]));
    }
    conditions.push_back(std::move(j));
  }
  return {{"plan", std::move(plan)},
          {"method",
           "exec-time inflation = geometric mean of the condition's repetition medians / that of "
           "the isolated ones - 1; interval: Welch's t on the logs of the repetition medians "
           "(the repetition is the unit that varies), docs/control.md#interference"},
          {"planned_runs", report.planned_runs},
          {"runs", std::move(runs)},
          {"conditions", std::move(conditions)},
          {"warnings", report.warnings},
          {"interrupted", report.interrupted},
          {"verdict", report.verdict}};
}

namespace {

using Json = nlohmann::json;
using results::JsonFields;

std::optional<InterferenceCondition> ConditionFromName(const std::string& name) {
  for (const auto c : {InterferenceCondition::kIsolated, InterferenceCondition::kCpuOther,
                       InterferenceCondition::kMemoryOther, InterferenceCondition::kOwnCpu}) {
    if (ConditionName(c) == name) return c;
  }
  return std::nullopt;
}

InterferenceCondition TakeCondition(JsonFields& f, const char* key) {
  std::string name;
  f.Get(key, name);
  const auto c = ConditionFromName(name);
  if (!c) f.Fail(key, fmt::format("'{}' is no condition", name));
  return c.value_or(InterferenceCondition::kIsolated);
}

CounterReading TakeCounter(JsonFields f, double* per_job) {
  CounterReading c;
  std::string name;
  f.Get("name", name);
  bool found = false;
  for (const auto counter : measure::kAllCounters) {
    if (measure::CounterName(counter) == name) {
      c.counter = counter;
      found = true;
    }
  }
  if (!found) f.Fail("name", fmt::format("'{}' is no counter", name));
  f.Get("supported", c.supported);
  if (c.supported) {
    f.Get("value", c.value);
    f.Get("multiplexed", c.multiplexed);
    f.Get("user_only", c.user_only);
    if (per_job != nullptr) f.Get("per_job", *per_job);
  } else {
    f.Get("unsupported", c.unsupported);
  }
  return c;
}

/// The "counters" list of `f`'s object, each entry's errors under "WHERE.counters[K].".
std::vector<CounterReading> TakeCounters(JsonFields& f, const std::string& where,
                                         std::string* error, std::vector<double>* per_job) {
  std::vector<CounterReading> out;
  const Json* list = f.Find("counters");
  if (list == nullptr || !list->is_array()) return out;
  for (size_t k = 0; k < list->size(); ++k) {
    double each = 0;
    out.push_back(
        TakeCounter(JsonFields((*list)[k], fmt::format("{}counters[{}].", where, k), error),
                    per_job != nullptr ? &each : nullptr));
    if (per_job != nullptr) per_job->push_back(each);
  }
  return out;
}

InterferencePlan TakePlan(JsonFields& doc) {
  InterferencePlan p;
  JsonFields plan = doc.Nested("plan");
  plan.Get("cpu", p.cpu);
  plan.Get("other_cpus", p.other_cpus);
  plan.Get("jobs_per_run", p.jobs_per_run);
  plan.Get("repetitions", p.repetitions);
  plan.Get("work_set_bytes", p.work_set_bytes);
  plan.Get("llc_bytes", p.llc_bytes);
  std::vector<std::string> names;
  plan.Get("conditions", names);
  p.conditions.clear();
  for (const auto& n : names) {
    if (auto c = ConditionFromName(n)) {
      p.conditions.push_back(*c);
    } else {
      plan.Fail("conditions", fmt::format("'{}' is no condition", n));
    }
  }
  return p;
}

RunSummary TakeRun(const Json& j, const std::string& where, std::string* error) {
  JsonFields f(j, where, error);
  RunSummary r;
  r.condition = TakeCondition(f, "condition");
  f.Get("repetition", r.repetition);
  f.Get("measured", r.measured);
  if (!r.measured) {
    f.Get("error", r.error);
    return r;
  }
  f.Get("jobs", r.jobs);
  f.Get("median_exec_ns", r.median_exec_ns);
  r.counters = TakeCounters(f, where, error, nullptr);
  f.Get("warnings", r.warnings);
  return r;
}

ConditionResult TakeConditionResult(const Json& j, const std::string& where, std::string* error) {
  JsonFields f(j, where, error);
  ConditionResult c;
  c.condition = TakeCondition(f, "name");
  f.Get("runs", c.runs);
  f.Get("failed_runs", c.failed_runs);
  f.Get("jobs", c.jobs);
  f.Get("repetition_medians_ns", c.repetition_medians_ns);
  std::optional<double> median;
  f.GetOptional("median_exec_ns", median);
  c.median_exec_ns = median.value_or(0);
  const Json* inflation = f.Find("inflation");
  c.has_inflation = inflation != nullptr && inflation->is_object();
  if (c.has_inflation) {
    stats::Inflation& i = c.inflation;
    JsonFields in = f.Nested("inflation");
    in.Get("pct", i.pct);
    in.Get("ci_low_pct", i.ci_low_pct);
    in.Get("ci_high_pct", i.ci_high_pct);
    in.Get("confidence", i.confidence);
    in.Get("base_median_ns", i.base_median_ns);
    in.Get("cond_median_ns", i.cond_median_ns);
    in.Get("base_n", i.base_n);
    in.Get("cond_n", i.cond_n);
    in.GetIfPresent("df", i.df);  // Files before the interval over repetitions have none.
  } else {
    f.Get("no_inflation", c.no_inflation);
  }
  c.counters = TakeCounters(f, where, error, &c.counters_per_job);
  return c;
}

/// Every entry of the list `key` of `doc`, read by `take` with its errors under "KEY[K].".
template <typename Entry, typename Take>
std::vector<Entry> TakeList(JsonFields& doc, const char* key, std::string* error, Take take) {
  std::vector<Entry> out;
  const Json* list = doc.Find(key);
  for (size_t k = 0; list != nullptr && list->is_array() && k < list->size(); ++k) {
    out.push_back(take((*list)[k], fmt::format("{}[{}].", key, k), error));
  }
  return out;
}

}  // namespace

Expected<InterferenceReport> InterferenceFromJson(const nlohmann::json& doc) {
  InterferenceReport report;
  std::string error;
  JsonFields f(doc, "", &error);
  report.plan = TakePlan(f);
  f.Get("planned_runs", report.planned_runs);
  report.runs = TakeList<RunSummary>(f, "runs", &error, TakeRun);
  report.conditions = TakeList<ConditionResult>(f, "conditions", &error, TakeConditionResult);
  f.Get("warnings", report.warnings);
  f.Get("interrupted", report.interrupted);
  f.Get("verdict", report.verdict);
  if (!error.empty()) return UsageError("interference.json: " + error);
  return report;
}

Expected<InterferenceReport> ReadInterferenceFile(const std::string& path) {
  auto doc = results::ReadJsonDocument(path, "a control --interference run's interference.json");
  if (!doc) return doc.error();
  auto report = InterferenceFromJson(*doc);
  if (!report) return UsageError(fmt::format("{}: {}", path, report.error().message));
  return report;
}

std::string FormatInterference(const InterferenceReport& report) {
  std::string out = fmt::format("{:<14}{:>7}{:>9}{:>14}  {}\n", "condition", "runs", "jobs",
                                "median exec", "inflation [95 % CI]");
  for (const ConditionResult& c : report.conditions) {
    const int planned = c.runs + c.failed_runs;
    const std::string runs =
        c.failed_runs > 0 ? fmt::format("{}/{}", c.runs, planned) : fmt::format("{}", c.runs);
    const std::string median =
        c.jobs > 0 ? fmt::format("{:.2f} us", c.median_exec_ns / 1000.0) : std::string("-");
    std::string inflation;
    if (c.has_inflation) {
      inflation = stats::FormatInflation(c.inflation);
      if (std::fabs(c.inflation.confidence - 0.95) > 1e-9) {
        inflation += fmt::format(" ({:g} % CI)", 100 * c.inflation.confidence);
      }
    } else {
      inflation = c.condition == InterferenceCondition::kIsolated ? "baseline"
                                                                  : "- (" + c.no_inflation + ")";
    }
    out += fmt::format("{:<14}{:>7}{:>9}{:>14}  {}\n", ConditionName(c.condition), runs, c.jobs,
                       median, inflation);
  }
  out += fmt::format("\n{:<24}", "counters per job");
  for (const ConditionResult& c : report.conditions) {
    out += fmt::format("{:>14}", ConditionName(c.condition));
  }
  out += "\n";
  for (size_t k = 0; k < std::size(measure::kAllCounters); ++k) {
    const auto counter = measure::kAllCounters[k];
    bool none = !report.conditions.empty();
    for (const auto& c : report.conditions) none = none && !c.counters[k].supported;
    std::string line = fmt::format("{:<24}", measure::CounterName(counter));
    if (none) {
      out += line + report.conditions.front().counters[k].unsupported + "\n";
      continue;
    }
    std::vector<std::string> notes;
    for (const auto& c : report.conditions) {
      const CounterReading& r = c.counters[k];
      if (!r.supported) {
        line += fmt::format("{:>14}", "n/a");
        notes.push_back(fmt::format("  {}: {}", ConditionName(c.condition), r.unsupported));
        continue;
      }
      std::string flags = r.multiplexed ? "*" : "";
      if (r.user_only) flags += "u";
      line += fmt::format("{:>14}", fmt::format("{:.3f}{}", c.counters_per_job[k], flags));
    }
    out += line + "\n";
    for (const auto& n : notes) out += n + "\n";
  }
  out += "(* scaled: the counter was multiplexed; u: user mode only)\n";
  for (const auto& w : report.warnings) out += "warning: " + w + "\n";
  if (report.interrupted) {
    out +=
        fmt::format("interrupted after {} of {} runs\n", report.runs.size(), report.planned_runs);
  }
  out += "\n" + report.verdict + "\n";
  return out;
}

}  // namespace rtpulse::suite
