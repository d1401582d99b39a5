#include "results/control_file.h"

#include <fmt/format.h>

#include "results/json_fields.h"

namespace rtpulse::results {
namespace {

using Json = nlohmann::json;

nlohmann::json ClassesJson(const MicrosecondClasses& classes) {
  Json out = Json::array();
  for (const auto& [us, n] : classes) out.push_back({us, n});
  return out;
}

void ReadClasses(JsonFields& h, const char* key, MicrosecondClasses& out) {
  const Json* v = h.Find(key);
  if (v == nullptr) return;
  if (!v->is_array()) {
    h.Fail(key, "is not a list");
    return;
  }
  for (const auto& c : *v) {
    if (!c.is_array() || c.size() != 2 || !c[0].is_number_integer() || !c[1].is_number_unsigned()) {
      h.Fail(key, "holds an entry that is not [us, count]");
      return;
    }
    out.emplace_back(c[0].get<int64_t>(), c[1].get<uint64_t>());
  }
}

void ReadCounters(JsonFields& f, const Json& counters, ControlFile& out) {
  if (counters.is_object() && counters.contains("error") && counters["error"].is_string()) {
    out.counters_error = counters["error"].get<std::string>();
    return;
  }
  if (!counters.is_object()) {
    f.Fail("counters", "is not an object");
    return;
  }
  JsonFields all = f.Nested("counters");
  for (const auto& [name, c] : counters.items()) {
    ControlCounter counter;
    JsonFields cf = all.Nested(name.c_str());
    cf.GetOptional("value", counter.value);
    if (counter.value) {
      cf.Get("multiplexed", counter.multiplexed);
    } else {
      cf.Get("unsupported", counter.unsupported);
    }
    out.counters[name] = counter;
  }
}

void ReadNested(JsonFields& f, ControlFile& out) {
  JsonFields work_set = f.Nested("work_set");
  work_set.Get("bytes", out.work_set_bytes);
  work_set.Get("mode", out.work_set_mode);
  if (const Json* cal = f.Find("calibration"); cal != nullptr && !cal->is_null()) {
    ControlCalibration c;
    JsonFields cf = f.Nested("calibration");
    cf.Get("target_ns", c.target_ns);
    cf.Get("extra_passes", c.extra_passes);
    cf.Get("measured_ns", c.measured_ns);
    cf.Get("one_pass_ns", c.one_pass_ns);
    cf.Get("caveat", c.caveat);
    out.calibration = c;
  }
  if (const Json* inj = f.Find("inject"); inj != nullptr && !inj->is_null()) {
    std::pair<uint64_t, int64_t> every_extra{};
    JsonFields i = f.Nested("inject");
    i.Get("every", every_extra.first);
    i.Get("extra_ns", every_extra.second);
    out.inject = every_extra;
  }
  if (const Json* counters = f.Find("counters")) ReadCounters(f, *counters, out);
  if (const Json* cost = f.Find("control_cost")) out.control_cost = *cost;
  JsonFields h = f.Nested("histograms_us");
  ReadClasses(h, "wakeup_latency", out.wakeup_latency_us);
  ReadClasses(h, "execution", out.execution_us);
  ReadClasses(h, "response", out.response_us);
}

}  // namespace

nlohmann::json ToJson(const ControlFile& f) {
  Json counters = Json::object();
  if (!f.counters_error.empty()) counters = {{"error", f.counters_error}};
  for (const auto& [name, c] : f.counters) {
    counters[name] = c.value ? Json{{"value", *c.value}, {"multiplexed", c.multiplexed}}
                             : Json{{"value", nullptr}, {"unsupported", c.unsupported}};
  }
  Json calibration = nullptr;
  if (f.calibration) {
    const ControlCalibration& c = *f.calibration;
    calibration = {{"target_ns", c.target_ns},
                   {"extra_passes", c.extra_passes},
                   {"measured_ns", c.measured_ns},
                   {"one_pass_ns", c.one_pass_ns},
                   {"caveat", c.caveat}};
  }
  return {{"scenario", f.scenario},
          {"configuration", f.configuration},
          {"policy", f.policy},
          {"applied_policy", f.applied_policy},
          {"wake", f.wake},
          {"loaded", f.loaded},
          {"loads", f.loads},
          {"cpu", f.cpu},
          {"tid", f.tid},
          {"period_ns", f.period_ns},
          {"deadline_ns", f.deadline_ns},
          {"jobs_planned", f.jobs_planned},
          {"jobs", f.jobs},
          {"releases", f.releases},
          {"skipped", f.skipped},
          {"skipped_after_last", f.skipped_after_last},
          {"misses", f.misses},
          {"misses_unknown", f.misses_unknown},
          {"misses_is_lower_bound", f.misses_unknown > 0},
          {"grid_restarts", f.grid_restarts},
          {"release_unknown_jobs", f.release_unknown_jobs},
          {"rt_throttle_suspects", f.rt_throttle_suspects},
          {"interrupted", f.interrupted},
          {"degraded", f.degraded},
          {"warnings", f.warnings},
          {"rt_throttling", f.rt_throttling},
          {"deadline_overruns", f.deadline_overruns ? Json(*f.deadline_overruns) : Json(nullptr)},
          {"work_set", {{"bytes", f.work_set_bytes}, {"mode", f.work_set_mode}}},
          {"calibration", calibration},
          {"inject", f.inject ? Json{{"every", f.inject->first}, {"extra_ns", f.inject->second}}
                              : Json(nullptr)},
          {"counters", counters},
          {"control_cost", f.control_cost},
          {"checksum", f.checksum},
          {"latency_quantity", f.latency_quantity},
          {"histograms_us",
           {{"wakeup_latency", ClassesJson(f.wakeup_latency_us)},
            {"execution", ClassesJson(f.execution_us)},
            {"response", ClassesJson(f.response_us)}}}};
}

Expected<ControlFile> ControlFileFromJson(const nlohmann::json& doc) {
  ControlFile out;
  std::string error;
  JsonFields f(doc, "", &error);
  f.Get("scenario", out.scenario);
  f.Get("configuration", out.configuration);
  f.Get("policy", out.policy);
  f.Get("applied_policy", out.applied_policy);
  f.Get("wake", out.wake);
  f.Get("loaded", out.loaded);
  f.Get("loads", out.loads);
  f.Get("cpu", out.cpu);
  f.Get("tid", out.tid);
  f.Get("period_ns", out.period_ns);
  f.Get("deadline_ns", out.deadline_ns);
  f.Get("jobs_planned", out.jobs_planned);
  f.Get("jobs", out.jobs);
  f.Get("releases", out.releases);
  f.Get("skipped", out.skipped);
  f.Get("skipped_after_last", out.skipped_after_last);
  f.Get("misses", out.misses);
  f.GetIfPresent("misses_unknown", out.misses_unknown);  // absent before it was written: 0
  f.Get("grid_restarts", out.grid_restarts);
  f.Get("release_unknown_jobs", out.release_unknown_jobs);
  f.Get("rt_throttle_suspects", out.rt_throttle_suspects);
  f.Get("interrupted", out.interrupted);
  f.Get("degraded", out.degraded);
  f.Get("warnings", out.warnings);
  f.Get("rt_throttling", out.rt_throttling);
  f.GetOptional("deadline_overruns", out.deadline_overruns);
  f.Get("checksum", out.checksum);
  f.Get("latency_quantity", out.latency_quantity);
  ReadNested(f, out);
  if (!error.empty()) return UsageError("control.json: " + error);
  return out;
}

Expected<ControlFile> ReadControlFile(const std::string& path) {
  auto doc = ReadJsonDocument(path, "a control scenario's control.json");
  if (!doc) return doc.error();
  auto file = ControlFileFromJson(*doc);
  if (!file) return UsageError(fmt::format("{}: {}", path, file.error().message));
  return file;
}

}  // namespace rtpulse::results
