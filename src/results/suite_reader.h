#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "results/latency_result.h"
#include "results/suite_result.h"

namespace rtpulse::results {

/// A latency document (what `rtpulse latency --json` writes, and each scenario's `latency` in
/// result.json) back into a LatencyRun: every thread's log-linear histogram is rebuilt from
/// `histogram_log` with the exact min, max, mean and standard deviation saved beside it, so
/// statistics computed from the result equal those of the run that wrote it.
/// Errors name the missing or mistyped field.
Expected<LatencyRun> LatencyRunFromJson(const nlohmann::json& latency);

/// Reads a run for report, compare and wcet: a results folder (DIR/result.json), a
/// result.json file, or a single `rtpulse latency --json` file (read as one scenario named
/// after the file). Every error (missing file, bad JSON with its byte offset, wrong schema,
/// a newer schema_version) is a usage error naming the file.
Expected<SuiteResult> ReadSuiteResult(const std::string& path);

/// The folder a run's relative files (<scenario>/samples.bin, thermal_power_log.csv) are
/// under: the folder itself, or the folder holding the given file.
std::string RunFolder(const std::string& path);

}  // namespace rtpulse::results
