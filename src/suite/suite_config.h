#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "load/load.h"
#include "measure/wake_path.h"

// What `rtpulse suite` runs: scenarios (a set of loads each) and the measurement settings
// shared by all of them. docs/suite-config.md describes the TOML form.
namespace rtpulse::suite {

/// One scenario: these loads run while the probes measure.
struct Scenario {
  std::string name;                     ///< Directory name: [a-z0-9][a-z0-9_-]*, unique.
  std::string description;              ///< One line, e.g. "1 CPU busy + light io".
  std::vector<load::LoadSpec> loads;    ///< Empty: idle.
  std::vector<std::string> load_specs;  ///< loads[i].text: each SPEC as written.
  std::optional<int64_t> duration_ns;   ///< Overrides SuiteConfig::duration_ns.
  std::optional<int64_t> settle_ns;     ///< Overrides SuiteConfig::settle_ns.
};

/// A whole suite: the shared settings and the scenarios, in run order.
struct SuiteConfig {
  std::string name = "default";
  std::string description;                ///< One line; empty when the file gives none.
  std::string source = "built-in";        ///< "built-in" or the TOML file's path.
  int64_t duration_ns = 600'000'000'000;  ///< Measured time per scenario.
  /// Loads run this long before measuring starts; those samples are discarded, so caches,
  /// page cache and CPU frequency have reached the loaded state.
  int64_t settle_ns = 5'000'000'000;
  int64_t interval_ns = 1'000'000;  ///< Probe period.
  int priority = 80;                ///< SCHED_FIFO priority of the probes (1..99).
  /// The probes' paths; empty when --wake names timerlat alone.
  std::vector<measure::WakePath> wake{measure::WakePath::kAbs};
  /// --wake ...,timerlat: the kernel's timerlat tracer after `wake`'s paths in each scenario.
  bool timerlat = false;
  int64_t monitor_interval_ns = 5'000'000'000;
  std::vector<Scenario> scenarios;
};

/// The five built-in scenarios scaled to `cpus` (the online CPUs, not empty): idle; light
/// (cpu on ceil(n/4) CPUs + light io); moderate (ceil(n/2) CPUs + medium io); heavy
/// (ceil(3n/4) CPUs + memory pressure + io); thermal (cpu on all n CPUs). Loads go on the
/// CPUs at the END of the list (a 4-CPU Pi: light on CPU 3, moderate on 2-3, heavy on 1-3),
/// so CPU 0, which takes most interrupts, stays the least loaded. The io loads write to
/// /tmp: a resource error (exit 3) says so when it is not writable.
Expected<std::vector<Scenario>> DefaultScenarios(const std::vector<int>& cpus);

/// The built-in suite: SuiteConfig's defaults and DefaultScenarios(cpus).
Expected<SuiteConfig> DefaultSuite(const std::vector<int>& cpus);

/// Parses a suite TOML file (docs/suite-config.md). Every error in the file is a usage error
/// "FILE:LINE:COL: what is wrong; the fix": TOML syntax, unknown keys (did you mean), wrong
/// types, bad durations, invalid or duplicate scenario names, bad load SPECs (their CPUs are
/// checked against `online_cpus`, not this machine), no scenario. A load that cannot run here
/// (stress-ng not installed) keeps load::ParseLoadSpec's resource error, with the position.
Expected<SuiteConfig> ParseSuiteToml(std::string_view text, std::string_view file_name,
                                     const std::vector<int>& online_cpus);

/// Reads and parses `path`; an unreadable file is a usage error naming it.
Expected<SuiteConfig> LoadSuiteFile(const std::string& path, const std::vector<int>& online_cpus);

/// A workload configuration's scenario (control, e2e): its name and description; when
/// `loaded`, the loads (parsed and as their SPECs); `settle_ns` when given (else the suite's).
Scenario ConfigurationScenario(const std::string& name, const std::string& description, bool loaded,
                               const std::vector<load::LoadSpec>& loads,
                               const std::vector<std::string>& load_specs,
                               std::optional<int64_t> settle_ns);

/// --scenarios a,b: those scenarios of `all`, in the order given. An unknown name, an empty
/// item or a name given twice is a usage error (with "did you mean" and the known names).
Expected<std::vector<Scenario>> SelectScenarios(const std::vector<Scenario>& all,
                                                std::string_view list);

/// True for a valid scenario or suite name: [a-z0-9][a-z0-9_-]*, at most 64 characters.
bool IsValidName(std::string_view name);

}  // namespace rtpulse::suite
