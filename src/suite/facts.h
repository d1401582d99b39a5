#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "load/load.h"
#include "results/latency_result.h"
#include "sys/system_info.h"

// Machine and load facts as the results files record them (shared by `latency`, `load` and
// the suite runner).
namespace rtpulse::suite {

/// Copies the machine description into a latency result (cyclictest's "sysinfo" block).
void FillSystem(const sys::SystemInfo& info, results::LatencyRun& run);

/// The machine description for system_info.json / result.json's "system".
nlohmann::json SystemJson(const sys::SystemInfo& info);

/// The `loads[]` array of `rtpulse load --json` (also in the suite's result.json).
nlohmann::json LoadReportsJson(const std::vector<load::LoadReport>& reports);

}  // namespace rtpulse::suite
