#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

// `rtpulse e2e --sweep threads`' sweep.json (docs/e2e.md, "Sweeps"): per load condition the
// inference thread count with the lowest p99 Total, and every count's p99 Total.
namespace rtpulse::results {

struct SweepRecommendation {
  bool loaded = false;  ///< The loaded scenarios' recommendation (false: the plain ones').
  int threads = 0;
  int64_t p99_total_ns = 0;
  std::vector<std::pair<int, int64_t>> p99_total_ns_by_threads;  ///< By thread count, ascending.
};

/// The "recommendation" list (sweep.json holds it under that key; so does `e2e --json`).
nlohmann::json SweepRecommendationsJson(const std::vector<SweepRecommendation>& recommendations);
/// sweep.json's document: {"recommendation": [...]}.
nlohmann::json SweepFileJson(const std::vector<SweepRecommendation>& recommendations);
/// Every recommendation of a sweep.json document; a missing or mistyped field is named.
Expected<std::vector<SweepRecommendation>> SweepFileFromJson(const nlohmann::json& doc);
Expected<std::vector<SweepRecommendation>> ReadSweepFile(const std::string& path);

}  // namespace rtpulse::results
