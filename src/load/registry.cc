#include "load/registry.h"

#include <fmt/format.h>

#include <vector>

#include "core/parse.h"
#include "core/printable.h"
#include "core/suggest.h"
#include "load/builtins.h"

namespace rtpulse::load {
namespace {

const std::vector<LoadDescriptor>& Table() {
  static const std::vector<LoadDescriptor> table = {
      CpuLoad(),    MemoryLoad(), CacheLoad(),    IoLoad(),
      SwitchLoad(), NetLoad(),    StressNgLoad(), CommandLoad(),
  };
  return table;
}

}  // namespace

std::string LoadParams::Option(const std::string& key, const std::string& fallback) const {
  for (const auto& [k, v] : options) {
    if (k == key) return v;
  }
  return fallback;
}

std::span<const LoadDescriptor> Loads() {
  return Table();
}

Expected<const LoadDescriptor*> FindLoad(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& d : Table()) {
    if (name == d.name) return &d;
    names.emplace_back(d.name);
  }
  const std::string guess = ClosestName(name, names);
  if (!guess.empty()) {
    return UsageError(fmt::format("unknown load '{}'. Did you mean '{}'?", Printable(name), guess));
  }
  return UsageError(
      fmt::format("unknown load '{}' (loads: {})", Printable(name), fmt::join(names, ", ")));
}

std::unique_ptr<Load> CreateLoad(const LoadSpec& spec) {
  auto d = FindLoad(spec.name);
  if (!d) std::abort();  // ParseLoadSpec only accepts names in the table.
  return (*d)->create(spec);
}

Expected<int64_t> IntOption(const LoadParams& params, const std::string& key, int64_t fallback,
                            int64_t min, int64_t max) {
  const std::string text = params.Option(key, "");
  if (text.empty()) return fallback;
  auto value = ParseInt(text, key);
  if (!value || *value < min || *value > max) {
    return UsageError(
        fmt::format("{}={} is not valid; give a whole number from {} to {}", key, text, min, max));
  }
  return *value;
}

}  // namespace rtpulse::load
