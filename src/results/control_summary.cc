#include "results/control_summary.h"

#include <cmath>
#include <utility>

#include "results/json_fields.h"

namespace rtpulse::results {

using Json = nlohmann::json;

namespace {

/// A finite number, or null (JSON has no NaN or infinity; the writer printed null for them).
Json FiniteOrNull(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
}

Json OrNull(const std::optional<int64_t>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json CostJson(const ControlSummaryConfiguration& c) {
  if (!c.cost) return {{"error", c.cost_error}};
  const ControlSummaryCost& k = *c.cost;
  return {{"cost_increase_pct", FiniteOrNull(k.cost_increase_pct)},
          {"peak_error_rad", FiniteOrNull(k.peak_error_rad)},
          {"worst_stall_ns", k.worst_stall_ns},
          {"outside_model", k.outside_model},
          {"summary", k.summary}};
}

Json ConfigurationJson(const ControlSummaryConfiguration& c) {
  const ControlSummaryRow& r = c.row;
  return {{"scenario", r.scenario},
          {"configuration", r.configuration},
          {"jobs", r.jobs},
          {"responses", r.responses},
          {"releases", c.releases},
          {"skipped", r.skipped},
          {"misses", r.misses},
          {"misses_unknown", r.misses_unknown},
          {"misses_is_lower_bound", r.misses_unknown > 0},
          {"interrupted", c.interrupted},
          {"mean_response_us", FiniteOrNull(r.mean_response_us)},
          {"p99_response_us", OrNull(r.p99_response_us)},
          {"max_response_us", OrNull(r.max_response_us)},
          {"max_latency_us", OrNull(r.max_latency_us)},
          {"median_exec_us", FiniteOrNull(r.median_exec_us)},
          {"control_cost", CostJson(c)}};
}

void ReadConfiguration(JsonFields f, ControlSummaryConfiguration& c) {
  ControlSummaryRow& r = c.row;
  f.Get("scenario", r.scenario);
  f.Get("configuration", r.configuration);
  f.Get("jobs", r.jobs);
  r.responses = r.jobs;  // a summary from before the field: every release known
  f.GetIfPresent("responses", r.responses);
  f.Get("releases", c.releases);
  f.Get("skipped", r.skipped);
  f.Get("misses", r.misses);
  f.GetIfPresent("misses_unknown", r.misses_unknown);  // absent before it was written: 0
  f.Get("interrupted", c.interrupted);
  f.GetOptional("mean_response_us", r.mean_response_us);
  f.GetOptional("p99_response_us", r.p99_response_us);
  f.GetOptional("max_response_us", r.max_response_us);
  f.GetOptional("max_latency_us", r.max_latency_us);
  f.GetOptional("median_exec_us", r.median_exec_us);
  const Json* cost = f.Find("control_cost");
  if (cost == nullptr) return;
  JsonFields k = f.Nested("control_cost");
  if (cost->is_object() && cost->contains("error")) {
    k.Get("error", c.cost_error);
    return;
  }
  ControlSummaryCost out;
  // Present, null when not finite.
  k.GetOptional("cost_increase_pct", out.cost_increase_pct);
  k.GetOptional("peak_error_rad", out.peak_error_rad);
  k.Get("worst_stall_ns", out.worst_stall_ns);
  k.Get("outside_model", out.outside_model);
  k.Get("summary", out.summary);
  c.cost = out;
}

}  // namespace

Json ToJson(const ControlSummary& summary) {
  Json configurations = Json::array();
  for (const auto& c : summary.configurations) configurations.push_back(ConfigurationJson(c));
  return {{"configurations", std::move(configurations)},
          {"figure_notes", summary.figure_notes},
          {"results", summary.results},
          {"status", summary.status}};
}

Expected<ControlSummary> ControlSummaryFromJson(const Json& doc) {
  ControlSummary out;
  std::string error;
  JsonFields f(doc, "", &error);
  f.GetList("configurations", out.configurations, ReadConfiguration);
  f.Get("figure_notes", out.figure_notes);
  f.Get("results", out.results);
  f.Get("status", out.status);
  if (!error.empty()) return UsageError("control summary: " + error);
  return out;
}

}  // namespace rtpulse::results
