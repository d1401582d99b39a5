// The e2e run summary's rows and the sweep's recommendation (suite/e2e_workload.h,
// results/e2e_summary.h).
#include <utility>

#include "suite/e2e_workload.h"

namespace rtpulse::suite {

namespace {

results::E2eSummaryRow SummaryRowOf(const E2eOutcome& o, uint64_t frames_asked) {
  results::E2eSummaryRow row;
  row.scenario = o.scenario;
  row.configuration = o.configuration;
  row.threads = o.threads;
  row.loaded = o.loaded;
  row.frames = o.rows.size();
  if (auto st = results::ComputeE2eStageStats(results::StageValues(o.rows, "Total"))) {
    row.total_count = st->count;
    row.p50_total_ns = st->p50_ns;
    row.p99_total_ns = st->p99_ns;
    row.max_total_ns = st->max_ns;
  }
  if (o.facts.deadline_ns > 0) row.misses = o.facts.misses;
  row.dropped = o.facts.dropped;
  row.lost = o.facts.lost;
  row.throughput_fps = results::E2eThroughputFps(o.rows);
  row.interrupted = o.interrupted;
  row.source_ran_out = o.facts.source_ended && o.rows.size() < frames_asked;
  row.backend = o.facts.backend_name;
  return row;
}

}  // namespace

results::E2eSummary E2eSummaryOf(const E2eWorkload& workload, bool sweep) {
  results::E2eSummary summary;
  for (const auto& o : workload.outcomes()) {
    summary.scenarios.push_back(SummaryRowOf(o, workload.frames_asked()));
  }
  if (sweep) {
    std::vector<results::SweepRecommendation> recs;
    for (const bool loaded : {false, true}) {
      auto r = RecommendThreads(workload.outcomes(), loaded);
      if (r) recs.push_back({loaded, r->threads, r->p99_ns, std::move(r->p99_by_threads)});
    }
    summary.recommendation = std::move(recs);
  }
  return summary;
}

}  // namespace rtpulse::suite
