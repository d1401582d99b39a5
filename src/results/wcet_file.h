#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"

// `rtpulse wcet`'s wcet.json (docs/wcet.md): per scenario with a samples log, its
// extreme-value report (stats::ToJson of stats::EvtReport) and its exceedance plot's files;
// the scenarios without a log are listed as skipped. Written by `rtpulse wcet`, read back by
// ReadWcetFile.
namespace rtpulse::results {

inline constexpr const char* kWcetSchema = "rtpulse.wcet";
inline constexpr int kWcetSchemaVersion = 1;

/// One scenario's analysis.
struct WcetScenarioEntry {
  std::string scenario;
  std::string samples_file;  ///< Relative to the run folder, as result.json names it.
  uint64_t threads = 0;      ///< Threads merged into the one series.
  std::string order;         ///< How the threads' samples were merged.
  uint64_t dropped = 0;      ///< Samples the log lost while recording (ring full).
  std::vector<std::string> input_warnings;
  nlohmann::json plot;    ///< The exceedance plot's files (report::ExceedancePlotJson).
  nlohmann::json report;  ///< The fits, estimates and checks (stats::ToJson(EvtReport)).
};

struct WcetFile {
  std::string rtpulse_version;
  std::string cmdline;
  std::string run;         ///< The results folder analysed.
  std::string disclaimer;  ///< stats::kEvtDisclaimer: an extrapolation, not a guarantee.
  std::vector<std::string> skipped_scenarios;  ///< Scenarios without a samples log.
  std::vector<WcetScenarioEntry> scenarios;
};

/// The document as `rtpulse wcet` writes it (schema "rtpulse.wcet", version 1).
nlohmann::json ToJson(const WcetFile& file);
/// A parsed wcet.json; a missing or mistyped field, or another schema, is a usage error that
/// names it.
Expected<WcetFile> WcetFileFromJson(const nlohmann::json& doc);
/// Reads and parses a wcet.json; errors name the file.
Expected<WcetFile> ReadWcetFile(const std::string& path);

}  // namespace rtpulse::results
