#include "suite/suite_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/fs_root.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/suggest.h"

namespace rtpulse::suite {
namespace {

std::vector<std::string> NamesOf(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> names;
  for (const auto& s : scenarios) names.push_back(s.name);
  return names;
}

}  // namespace

bool IsValidName(std::string_view name) {
  const auto lower_or_digit = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > 64 || !lower_or_digit(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return lower_or_digit(c) || c == '-' || c == '_'; });
}

Expected<SuiteConfig> LoadSuiteFile(const std::string& path, const std::vector<int>& online_cpus) {
  const auto text = ReadWholeFile(path);
  if (!text) {
    return UsageError(
        fmt::format("cannot read suite file '{}': {}; give the path of a suite "
                    "TOML file (examples in examples/suites/)",
                    path, std::strerror(errno)));
  }
  return ParseSuiteToml(*text, path, online_cpus);
}

Scenario ConfigurationScenario(const std::string& name, const std::string& description, bool loaded,
                               const std::vector<load::LoadSpec>& loads,
                               const std::vector<std::string>& load_specs,
                               std::optional<int64_t> settle_ns) {
  Scenario s;
  s.name = name;
  s.description = description;
  if (loaded) {
    s.loads = loads;
    s.load_specs = load_specs;
  }
  s.settle_ns = settle_ns;
  return s;
}

Expected<std::vector<Scenario>> SelectScenarios(const std::vector<Scenario>& all,
                                                std::string_view list) {
  const std::vector<std::string> names = NamesOf(all);
  std::vector<Scenario> picked;
  std::vector<std::string> seen;
  size_t start = 0;
  for (;;) {
    const size_t comma = list.find(',', start);
    const std::string name(
        TrimBlanks(list.substr(start, comma == std::string_view::npos ? comma : comma - start)));
    if (name.empty()) {
      return UsageError(
          fmt::format("--scenarios '{}' has an empty name; give names separated by "
                      "commas, e.g. --scenarios {}",
                      Printable(list), fmt::join(names, ",")));
    }
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      const std::string guess = ClosestName(name, names);
      return UsageError(fmt::format(
          "unknown scenario '{}' in --scenarios; {}the suite has {}", Printable(name),
          guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess), fmt::join(names, ", ")));
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return UsageError(fmt::format("scenario '{}' is given twice in --scenarios; drop one", name));
    }
    seen.push_back(name);
    picked.push_back(all[static_cast<size_t>(it - names.begin())]);
    if (comma == std::string_view::npos) return picked;
    start = comma + 1;
  }
}

}  // namespace rtpulse::suite
