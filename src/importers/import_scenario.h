#pragma once

#include <string>

#include "importers/import.h"
#include "results/suite_result.h"

// An imported file as one scenario of a results folder (`rtpulse import`, docs/import.md):
// its name, its result, and exact percentiles from the samples log the import wrote.
namespace rtpulse::importers {

/// A scenario name that is also a safe folder name: the file's stem, every character other
/// than letters, digits, - _ . replaced by _; "import" before a stem that is empty or starts
/// with a dot.
std::string ScenarioName(const std::string& file);

/// The scenario of `imported` (its probes moved out): complete, described by the file and
/// format, with the tool's warnings; a file without a distribution (cyclictest's JSON without
/// a histogram) has no latency and an error that quotes the tool's own numbers per thread.
/// `samples_file` is the log's path relative to the results folder ("" when none).
results::ScenarioResult ImportedScenario(const std::string& name, const std::string& file,
                                         Imported& imported, const std::string& samples_file,
                                         const std::string& cmdline);

/// Replaces the summary's bucket edges by exact percentiles from the scenario's samples log
/// (two or three streaming passes, never the whole file in memory) when the file holds
/// exactly the histogram's samples; otherwise a warning says why they stay bucket edges.
void AddExactPercentiles(results::ScenarioResult& s, const std::string& samples_path);

}  // namespace rtpulse::importers
