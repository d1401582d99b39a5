#include "importers/import_scenario.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <iterator>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "core/samples_file.h"
#include "core/version.h"
#include "stats/exact_percentiles.h"

namespace rtpulse::importers {

std::string ScenarioName(const std::string& file) {
  std::string name = std::filesystem::path(file).stem().string();
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  }
  return name.empty() || name[0] == '.' ? "import" + name : name;
}

results::ScenarioResult ImportedScenario(const std::string& name, const std::string& file,
                                         Imported& imported, const std::string& samples_file,
                                         const std::string& cmdline) {
  results::ScenarioResult s;
  s.name = name;
  s.description = fmt::format("imported from {} ({})", file, FormatName(imported.format));
  s.status = results::ScenarioStatus::kComplete;
  s.warnings = imported.warnings;
  s.samples_file = samples_file;
  if (!imported.has_distribution) {
    std::vector<std::string> parts;
    for (const auto& t : imported.source_numbers) {
      const std::string samples = t.contains("cycles") ? t["cycles"].dump() : t["count"].dump();
      if (t.contains("wrapped")) {
        parts.push_back(fmt::format(
            "thread {}: {} samples, {} negative latencies that wrapped (cyclictest's unsigned "
            "wrap): avg and max corrupt, min of the non-negative ones {} us",
            t["thread"].dump(), samples, t["wrapped"]["negative_latencies"].dump(),
            t["min"].dump()));
        continue;
      }
      parts.push_back(fmt::format("thread {}: {} samples, min {} avg {} max {} us",
                                  t["thread"].dump(), samples, t["min"].dump(), t["avg"].dump(),
                                  t["max"].dump()));
    }
    s.error = fmt::format(
        "percentiles unavailable: no histogram in the file; the tool's own "
        "numbers: {}",
        fmt::join(parts, "; "));
    return s;
  }
  results::LatencyRun run;
  run.rtpulse_version = kVersion;
  run.cmdline = cmdline;
  results::PathRun path;
  path.wake = "import";
  path.probes = std::move(imported.probes);
  run.paths.push_back(std::move(path));
  run.warnings = imported.warnings;
  s.latency = std::move(run);
  return s;
}

void AddExactPercentiles(results::ScenarioResult& s, const std::string& samples_path) {
  if (!s.latency || s.latency->paths.size() != 1 || samples_path.empty()) return;
  Histogram all;
  for (const auto& p : s.latency->paths.front().probes) all.Merge(p.histogram);
  if (all.count() == 0) return;
  const stats::SamplePass pass = [&](const std::function<void(int64_t)>& sink) -> Status {
    auto read = ReadSamplesFile(samples_path, [&](const SampleRecord& r) { sink(LatencyNs(r)); });
    if (!read) return read.error();
    return Status::Ok();
  };
  const std::vector<double> percentiles(std::begin(results::kSummaryPercentiles),
                                        std::end(results::kSummaryPercentiles));
  auto exact = stats::ComputeExactPercentiles(pass, percentiles);
  if (!exact || !stats::SameSamples(exact->histogram, all)) {
    s.warnings.push_back(
        fmt::format("percentiles are histogram bucket edges, not exact: {}",
                    exact ? "samples.bin does not hold exactly the histogram's samples"
                          : exact.error().message));
    return;
  }
  const std::vector<int64_t>& v = exact->values;
  s.exact_percentiles = results::ExactPercentileValues{v[0], v[1], v[2], v[3], v[4]};
}

}  // namespace rtpulse::importers
