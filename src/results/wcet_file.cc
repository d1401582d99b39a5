#include "results/wcet_file.h"

#include <fmt/format.h>

#include <utility>

#include "results/json_fields.h"

namespace rtpulse::results {

using Json = nlohmann::json;

Json ToJson(const WcetFile& file) {
  Json scenarios = Json::array();
  for (const auto& s : file.scenarios) {
    scenarios.push_back({{"scenario", s.scenario},
                         {"samples_file", s.samples_file},
                         {"threads", s.threads},
                         {"order", s.order},
                         {"dropped", s.dropped},
                         {"input_warnings", s.input_warnings},
                         {"plot", s.plot},
                         {"report", s.report}});
  }
  return {{"schema", kWcetSchema},
          {"schema_version", kWcetSchemaVersion},
          {"rtpulse_version", file.rtpulse_version},
          {"cmdline", file.cmdline},
          {"run", file.run},
          {"disclaimer", file.disclaimer},
          {"skipped_scenarios", file.skipped_scenarios},
          {"scenarios", std::move(scenarios)}};
}

namespace {

/// One entry of "scenarios"; its plot and report must be objects (their own fields are the
/// plot's and stats' to read).
void ReadScenario(JsonFields f, WcetScenarioEntry& out) {
  f.Get("scenario", out.scenario);
  f.Get("samples_file", out.samples_file);
  f.Get("threads", out.threads);
  f.Get("order", out.order);
  f.Get("dropped", out.dropped);
  f.Get("input_warnings", out.input_warnings);
  for (const auto& [key, into] : {std::pair{"plot", &out.plot}, std::pair{"report", &out.report}}) {
    if (const Json* v = f.Find(key); v != nullptr) {
      if (v->is_object()) {
        *into = *v;
      } else {
        f.Fail(key, fmt::format("is {}, not an object", v->type_name()));
      }
    }
  }
}

}  // namespace

Expected<WcetFile> WcetFileFromJson(const Json& doc) {
  WcetFile out;
  std::string error;
  JsonFields f(doc, "", &error);
  std::string schema;
  int version = 0;
  f.Get("schema", schema);
  f.Get("schema_version", version);
  if (error.empty() && (schema != kWcetSchema || version != kWcetSchemaVersion)) {
    return UsageError(
        fmt::format("schema '{}' version {} is not {} version {} (a wcet.json of "
                    "this rtpulse)",
                    schema, version, kWcetSchema, kWcetSchemaVersion));
  }
  f.Get("rtpulse_version", out.rtpulse_version);
  f.Get("cmdline", out.cmdline);
  f.Get("run", out.run);
  f.Get("disclaimer", out.disclaimer);
  f.Get("skipped_scenarios", out.skipped_scenarios);
  f.GetList("scenarios", out.scenarios, ReadScenario);
  if (!error.empty()) return UsageError("wcet.json: " + error);
  return out;
}

Expected<WcetFile> ReadWcetFile(const std::string& path) {
  auto doc = ReadJsonDocument(path, "a wcet.json that 'rtpulse wcet RUN' wrote (RUN/wcet/)");
  if (!doc) return doc.error();
  auto file = WcetFileFromJson(*doc);
  if (!file) return UsageError(fmt::format("{}: {}", path, file.error().message));
  return file;
}

}  // namespace rtpulse::results
