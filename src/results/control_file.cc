#include "results/control_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace rtpulse::results {
namespace {

using Json = nlohmann::json;

nlohmann::json ClassesJson(const MicrosecondClasses& classes) {
  Json out = Json::array();
  for (const auto& [us, n] : classes) out.push_back({us, n});
  return out;
}

/// Reads the fields of one JSON object, the first problem kept with the field's name.
class Fields {
 public:
  explicit Fields(const Json& doc) : doc_(doc) {}

  template <typename T>
  void Get(const char* key, T& out) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    try {
      out = v->get<T>();
    } catch (const Json::exception&) {
      Fail(key, fmt::format("is {}, not the expected type", v->type_name()));
    }
  }
  template <typename T>
  void GetOptional(const char* key, std::optional<T>& out) {
    const Json* v = Find(key);
    if (v == nullptr || v->is_null()) return;
    T value{};
    Get(key, value);
    out = value;
  }
  const Json* Find(const char* key) {
    if (!doc_.is_object()) {
      Fail(key, "has no object around it");
      return nullptr;
    }
    const auto it = doc_.find(key);
    if (it == doc_.end()) {
      Fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  void Fail(const std::string& key, const std::string& what) {
    if (error_.empty()) error_ = fmt::format("field '{}' {}", key, what);
  }
  const std::string& error() const { return error_; }

 private:
  const Json& doc_;
  std::string error_;
};

void ReadClasses(Fields& f, const Json& histograms, const char* key, MicrosecondClasses& out) {
  Fields h(histograms);
  const Json* v = h.Find(key);
  if (v == nullptr || !v->is_array()) {
    f.Fail(std::string("histograms_us.") + key, "is missing or not a list");
    return;
  }
  for (const auto& c : *v) {
    if (!c.is_array() || c.size() != 2 || !c[0].is_number_integer() || !c[1].is_number_unsigned()) {
      f.Fail(std::string("histograms_us.") + key, "holds an entry that is not [us, count]");
      return;
    }
    out.emplace_back(c[0].get<int64_t>(), c[1].get<uint64_t>());
  }
}

void ReadCounters(Fields& f, const Json& counters, ControlFile& out) {
  if (counters.is_object() && counters.contains("error") && counters["error"].is_string()) {
    out.counters_error = counters["error"].get<std::string>();
    return;
  }
  if (!counters.is_object()) {
    f.Fail("counters", "is not an object");
    return;
  }
  for (const auto& [name, c] : counters.items()) {
    ControlCounter counter;
    Fields cf(c);
    cf.GetOptional("value", counter.value);
    if (counter.value) {
      cf.Get("multiplexed", counter.multiplexed);
    } else {
      cf.Get("unsupported", counter.unsupported);
    }
    if (!cf.error().empty()) f.Fail("counters." + name, cf.error());
    out.counters[name] = counter;
  }
}

void ReadNested(Fields& f, ControlFile& out) {
  if (const Json* ws = f.Find("work_set")) {
    Fields w(*ws);
    w.Get("bytes", out.work_set_bytes);
    w.Get("mode", out.work_set_mode);
    if (!w.error().empty()) f.Fail("work_set", w.error());
  }
  if (const Json* cal = f.Find("calibration"); cal != nullptr && !cal->is_null()) {
    ControlCalibration c;
    Fields cf(*cal);
    cf.Get("target_ns", c.target_ns);
    cf.Get("extra_passes", c.extra_passes);
    cf.Get("measured_ns", c.measured_ns);
    cf.Get("one_pass_ns", c.one_pass_ns);
    cf.Get("caveat", c.caveat);
    if (!cf.error().empty()) f.Fail("calibration", cf.error());
    out.calibration = c;
  }
  if (const Json* inj = f.Find("inject"); inj != nullptr && !inj->is_null()) {
    std::pair<uint64_t, int64_t> every_extra{};
    Fields i(*inj);
    i.Get("every", every_extra.first);
    i.Get("extra_ns", every_extra.second);
    if (!i.error().empty()) f.Fail("inject", i.error());
    out.inject = every_extra;
  }
  if (const Json* counters = f.Find("counters")) ReadCounters(f, *counters, out);
  if (const Json* cost = f.Find("control_cost")) out.control_cost = *cost;
  if (const Json* h = f.Find("histograms_us")) {
    ReadClasses(f, *h, "wakeup_latency", out.wakeup_latency_us);
    ReadClasses(f, *h, "execution", out.execution_us);
    ReadClasses(f, *h, "response", out.response_us);
  }
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
  Fields f(doc);
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
  if (!f.error().empty()) return UsageError("control.json: " + f.error());
  return out;
}

Expected<ControlFile> ReadControlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return UsageError(
        fmt::format("{}: cannot be read; give a control scenario's control.json", path));
  std::stringstream text;
  text << in.rdbuf();
  const Json doc = Json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) return UsageError(fmt::format("{}: not JSON", path));
  auto file = ControlFileFromJson(doc);
  if (!file) return UsageError(fmt::format("{}: {}", path, file.error().message));
  return file;
}

}  // namespace rtpulse::results
