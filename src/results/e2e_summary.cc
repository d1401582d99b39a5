#include "results/e2e_summary.h"

#include <utility>

#include "results/json_fields.h"

namespace rtpulse::results {

using Json = nlohmann::json;

namespace {

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json RowJson(const E2eSummaryRow& r) {
  return {{"scenario", r.scenario},
          {"configuration", r.configuration},
          {"threads", r.threads},
          {"loaded", r.loaded},
          {"frames", r.frames},
          {"total_count", r.total_count},
          {"p50_total_ns", OrNull(r.p50_total_ns)},
          {"p99_total_ns", OrNull(r.p99_total_ns)},
          {"max_total_ns", OrNull(r.max_total_ns)},
          {"misses", OrNull(r.misses)},
          {"dropped", r.dropped},
          {"lost", r.lost},
          {"throughput_fps", OrNull(r.throughput_fps)},
          {"interrupted", r.interrupted},
          {"source_ran_out", r.source_ran_out},
          {"backend", r.backend}};
}

void ReadRow(JsonFields f, E2eSummaryRow& r) {
  f.Get("scenario", r.scenario);
  f.Get("configuration", r.configuration);
  f.Get("threads", r.threads);
  f.Get("loaded", r.loaded);
  f.Get("frames", r.frames);
  f.Get("total_count", r.total_count);
  // Present, null when not known (GetOptional names a missing one).
  f.GetOptional("p50_total_ns", r.p50_total_ns);
  f.GetOptional("p99_total_ns", r.p99_total_ns);
  f.GetOptional("max_total_ns", r.max_total_ns);
  f.GetOptional("misses", r.misses);
  f.Get("dropped", r.dropped);
  f.Get("lost", r.lost);
  f.GetOptional("throughput_fps", r.throughput_fps);
  f.Get("interrupted", r.interrupted);
  f.Get("source_ran_out", r.source_ran_out);
  f.Get("backend", r.backend);
}

}  // namespace

Json ToJson(const E2eSummary& summary) {
  Json rows = Json::array();
  for (const auto& r : summary.scenarios) rows.push_back(RowJson(r));
  Json not_measured = Json::array();
  for (const auto& n : summary.not_measured) {
    not_measured.push_back({{"scenario", n.scenario}, {"why", n.why}});
  }
  Json doc = {{"scenarios", std::move(rows)},
              {"not_measured", std::move(not_measured)},
              {"figure_notes", summary.figure_notes},
              {"results", summary.results},
              {"status", summary.status}};
  if (summary.recommendation) {
    doc["recommendation"] = SweepRecommendationsJson(*summary.recommendation);
  }
  return doc;
}

Expected<E2eSummary> E2eSummaryFromJson(const Json& doc) {
  E2eSummary out;
  std::string error;
  JsonFields f(doc, "", &error);
  f.GetList("scenarios", out.scenarios, ReadRow);
  f.GetList("not_measured", out.not_measured, [](JsonFields item, E2eNotMeasured& n) {
    item.Get("scenario", n.scenario);
    item.Get("why", n.why);
  });
  f.Get("figure_notes", out.figure_notes);
  f.Get("results", out.results);
  f.Get("status", out.status);
  if (!error.empty()) return UsageError("e2e summary: " + error);
  if (doc.contains("recommendation")) {
    auto recs = SweepFileFromJson(Json{{"recommendation", doc["recommendation"]}});
    if (!recs) {
      // The list's reader names sweep.json, where the same list lives; here it is this file's.
      std::string why = recs.error().message;
      if (why.rfind("sweep.json: ", 0) == 0) why.erase(0, std::string("sweep.json: ").size());
      return UsageError("e2e summary: " + why);
    }
    out.recommendation = std::move(*recs);
  }
  return out;
}

}  // namespace rtpulse::results
