// The built-in scenarios: the seed's idle / light / moderate / heavy / thermal, scaled to the
// CPU count so that a 2-CPU VM and an 8-CPU board run comparable shares of their machine.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/parse.h"
#include "load/spec.h"
#include "suite/suite_config.h"

namespace rtpulse::suite {
namespace {

/// ceil(n * num / den) CPUs, at least one.
size_t Share(size_t n, size_t num, size_t den) {
  return std::max<size_t>(1, (n * num + den - 1) / den);
}

/// The last `count` of the sorted CPUs: CPU 0 usually takes the interrupts and housekeeping,
/// so the loads start at the other end.
std::vector<int> Tail(const std::vector<int>& sorted, size_t count) {
  return {sorted.end() - static_cast<std::ptrdiff_t>(count), sorted.end()};
}

std::string Busy(size_t count, size_t n) {
  if (count == n && n > 1) return fmt::format("all {} CPUs busy", n);
  return fmt::format("{} CPU{} busy", count, count == 1 ? "" : "s");
}

Expected<Scenario> Make(std::string name, std::string description, std::vector<std::string> specs,
                        const load::CpuScope& scope) {
  Scenario s{std::move(name), std::move(description), {}, std::move(specs), {}, {}};
  for (const auto& text : s.load_specs) {
    auto spec = load::ParseLoadSpec(text, scope);
    if (!spec) {
      // The specs are ours and their CPUs come from `scope`: only an unwritable /tmp (the
      // io loads' folder) gets here.
      return ResourceError(fmt::format(
          "built-in scenario '{}': {}; make /tmp writable, or run a suite file whose io loads "
          "name another folder (--config FILE with io:dir=PATH, docs/suite-config.md)",
          s.name, spec.error().message));
    }
    s.loads.push_back(std::move(*spec));
  }
  return s;
}

}  // namespace

Expected<std::vector<Scenario>> DefaultScenarios(const std::vector<int>& cpus) {
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.empty()) {
    std::fprintf(stderr, "rtpulse: DefaultScenarios needs at least one CPU\n");
    std::abort();
  }
  const load::CpuScope scope{sorted, {}};
  const size_t n = sorted.size();
  const size_t light = Share(n, 1, 4);
  const size_t moderate = Share(n, 1, 2);
  const size_t heavy = Share(n, 3, 4);
  const std::string light_cpus = FormatCpuList(Tail(sorted, light));
  const std::string moderate_cpus = FormatCpuList(Tail(sorted, moderate));
  const std::string heavy_cpus = FormatCpuList(Tail(sorted, heavy));
  // io intensity is the share of every 10 ms slice spent writing: 4 KiB fsyncs a quarter of
  // the time is light; 16 KiB half the time is medium; 64 KiB back to back is heavy.
  const std::vector<Expected<Scenario>> made = {
      Make("idle", "no load", {}, scope),
      Make("light", Busy(light, n) + " + light io",
           {fmt::format("cpu:cpus={}", light_cpus),
            fmt::format("io:cpus={},intensity=25", light_cpus)},
           scope),
      Make("moderate", Busy(moderate, n) + " + medium io",
           {fmt::format("cpu:cpus={}", moderate_cpus),
            fmt::format("io:cpus={},kb=16,intensity=50", moderate_cpus)},
           scope),
      Make("heavy", Busy(heavy, n) + " + memory pressure + io",
           {fmt::format("cpu:cpus={}", heavy_cpus), fmt::format("memory:cpus={}", heavy_cpus),
            fmt::format("io:cpus={},kb=64", heavy_cpus)},
           scope),
      Make("thermal", Busy(n, n) + ", sustained (heats the SoC)",
           {fmt::format("cpu:cpus={}", FormatCpuList(sorted))}, scope),
  };
  std::vector<Scenario> scenarios;
  for (const auto& m : made) {
    if (!m) return m.error();
    scenarios.push_back(*m);
  }
  return scenarios;
}

Expected<SuiteConfig> DefaultSuite(const std::vector<int>& cpus) {
  auto scenarios = DefaultScenarios(cpus);
  if (!scenarios) return scenarios.error();
  SuiteConfig config;
  config.description = "the five built-in scenarios, scaled to the online CPUs";
  config.scenarios = std::move(*scenarios);
  return config;
}

}  // namespace rtpulse::suite
