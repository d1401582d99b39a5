#include "results/e2e_sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "results/json_fields.h"

namespace rtpulse::results {
namespace {

using Json = nlohmann::json;

Expected<SweepRecommendation> RecommendationFromJson(const Json& r, size_t index) {
  const auto bad = [&](const char* field) {
    return UsageError(fmt::format(
        "sweep.json: recommendation {}: field '{}' is missing or of the wrong type", index, field));
  };
  SweepRecommendation out;
  if (!r.is_object() || !r.contains("loaded") || !r["loaded"].is_boolean()) return bad("loaded");
  out.loaded = r["loaded"].get<bool>();
  if (!r.contains("threads") || !r["threads"].is_number_integer()) return bad("threads");
  out.threads = r["threads"].get<int>();
  if (!r.contains("p99_total_ns") || !r["p99_total_ns"].is_number_integer()) {
    return bad("p99_total_ns");
  }
  out.p99_total_ns = r["p99_total_ns"].get<int64_t>();
  const char* by = "p99_total_ns_by_threads";
  if (!r.contains(by) || !r[by].is_object()) return bad(by);
  for (const auto& [key, value] : r[by].items()) {
    int threads = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), threads);
    if (ec != std::errc{} || end != key.data() + key.size() || !value.is_number_integer()) {
      return bad(by);
    }
    out.p99_total_ns_by_threads.emplace_back(threads, value.get<int64_t>());
  }
  // The object's keys sort as text ("10" before "2"): the counts in number order.
  std::sort(out.p99_total_ns_by_threads.begin(), out.p99_total_ns_by_threads.end());
  return out;
}

}  // namespace

nlohmann::json SweepRecommendationsJson(const std::vector<SweepRecommendation>& recommendations) {
  Json out = Json::array();
  for (const auto& r : recommendations) {
    Json p99 = Json::object();
    for (const auto& [threads, ns] : r.p99_total_ns_by_threads) p99[std::to_string(threads)] = ns;
    out.push_back({{"loaded", r.loaded},
                   {"threads", r.threads},
                   {"p99_total_ns", r.p99_total_ns},
                   {"p99_total_ns_by_threads", p99}});
  }
  return out;
}

nlohmann::json SweepFileJson(const std::vector<SweepRecommendation>& recommendations) {
  return {{"recommendation", SweepRecommendationsJson(recommendations)}};
}

Expected<std::vector<SweepRecommendation>> SweepFileFromJson(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("recommendation") || !doc["recommendation"].is_array()) {
    return UsageError("sweep.json: field 'recommendation' is missing or not a list");
  }
  std::vector<SweepRecommendation> out;
  for (size_t i = 0; i < doc["recommendation"].size(); ++i) {
    auto r = RecommendationFromJson(doc["recommendation"][i], i);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

Expected<std::vector<SweepRecommendation>> ReadSweepFile(const std::string& path) {
  auto doc = ReadJsonDocument(path, "an e2e sweep's sweep.json");
  if (!doc) return doc.error();
  auto file = SweepFileFromJson(*doc);
  if (!file) return UsageError(fmt::format("{}: {}", path, file.error().message));
  return file;
}

}  // namespace rtpulse::results
