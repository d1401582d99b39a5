#include "suite/explain_record.h"

#include <fmt/format.h>

#include <filesystem>
#include <string_view>
#include <utility>

namespace rtpulse::suite {
namespace {

results::ExplainCause ExplainCauseFromRow(const trace::CauseRow& row) {
  return {std::string(trace::CauseKindName(row.kind)), row.name, row.total_ns, row.spikes,
          row.max_ns};
}

results::SpikeExplanation ExplainSpikeFrom(const trace::Explanation& e, const std::string& verdict,
                                           int64_t explained_after_ns,
                                           const std::string& base_dir) {
  results::SpikeExplanation s;
  s.thread = e.spike.thread;
  s.cpu = e.spike.cpu;
  s.seq = e.spike.seq;
  s.expected_ns = e.spike.expected_ns;
  s.latency_ns = e.lateness_ns;
  s.chain = std::string(trace::ChainKindName(e.chain));
  s.chain_thread = e.chain_thread;
  s.probe_tid = e.probe_tid;
  s.complete = e.complete;
  s.incomplete_reason = e.incomplete_reason;
  s.verdict = verdict;
  for (const auto& p : e.parts) {
    s.parts.push_back({std::string(trace::CauseKindName(p.kind)), p.name, p.ns, p.count});
  }
  s.window_file = e.window_file.empty() ? "" : RelativeToBase(e.window_file, base_dir);
  s.explained_after_ns = explained_after_ns;
  return s;
}

}  // namespace

std::string RelativeToBase(const std::string& path, const std::string& base_dir) {
  if (base_dir.empty() || path.empty()) return path;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path abs_path = fs::absolute(fs::path(path), ec).lexically_normal();
  if (ec) return path;
  const fs::path abs_base = fs::absolute(fs::path(base_dir), ec).lexically_normal();
  if (ec) return path;
  const fs::path rel = abs_path.lexically_relative(abs_base);
  if (rel.empty() || *rel.begin() == "..") return path;
  return rel.string();
}

results::ExplainResult ToExplainResult(const trace::ExplainSummary& summary,
                                       const std::string& base_dir) {
  results::ExplainResult r;
  r.threshold_ns = summary.threshold_ns;
  r.active = summary.active;
  r.unavailable_reason = summary.unavailable_reason;
  r.spikes_seen = summary.spikes_seen;
  r.spikes_explained = summary.spikes_explained;
  r.spikes_not_explained = summary.spikes_not_explained;
  for (size_t i = 0; i < summary.explanations.size(); ++i) {
    const std::string verdict =
        i < summary.verdicts.size() ? summary.verdicts[i] : trace::Verdict(summary.explanations[i]);
    const int64_t after =
        i < summary.explained_after_ns.size() ? summary.explained_after_ns[i] : int64_t{0};
    r.spikes.push_back(ExplainSpikeFrom(summary.explanations[i], verdict, after, base_dir));
  }
  for (const auto& row : summary.causes.by_time)
    r.causes_by_time.push_back(ExplainCauseFromRow(row));
  for (const auto& row : summary.causes.by_count) {
    r.causes_by_count.push_back(ExplainCauseFromRow(row));
  }
  r.instance = summary.trace.instance;
  r.event_set = summary.trace.event_set.empty() ? "lean" : summary.trace.event_set;
  r.events_enabled = summary.trace.events_enabled;
  r.events_missing = summary.trace.events_missing;
  r.events_read = summary.trace.events_read;
  r.events_lost = summary.trace.events_lost;
  r.reader_cpu_ns = summary.trace.reader_cpu_ns;
  r.syscall_filter = summary.trace.syscall_filter;
  r.syscall_note = summary.trace.syscall_filter.empty() ? summary.syscall_note : "";
  for (const auto& p : summary.probe_threads) {
    r.probe_tids.push_back({p.wake, p.probe_tids, p.helper_tids});
  }
  if (summary.cost) {
    const trace::ExplainCost& c = *summary.cost;
    r.cost = results::ExplainCostResult{c.samples_without, c.samples_with, c.p50_without_ns,
                                        c.p99_without_ns,  c.p50_with_ns,  c.p99_with_ns};
  }
  r.notes = summary.notes;
  return r;
}

void AddExplainToRun(const trace::ExplainSummary& summary, const trace::ExplainPlan& plan,
                     bool cost_given, const std::string& duration, results::LatencyRun& run) {
  results::ExplainResult result = ToExplainResult(summary, "");
  if (plan.cost_phase_ns == 0 && !cost_given && summary.active) {
    result.notes.push_back(fmt::format(
        "trace cost not measured: -D {} is shorter than twice the default 2 s cost phase (give "
        "a longer -D, or --explain-cost)",
        duration));
  }
  if (summary.active && plan.window_dir.empty()) {
    result.notes.push_back("raw trace windows not saved (give --explain-windows DIR to keep them)");
  }
  if (!summary.active) {
    run.warnings.push_back(fmt::format("--explain: {}; the run goes on without attribution",
                                       summary.unavailable_reason));
  }
  run.explain = std::move(result);
}

}  // namespace rtpulse::suite
