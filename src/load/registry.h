#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "load/load.h"

namespace rtpulse::load {

/// One row of the load table (the stress-ng pattern): adding a load touches one new file and
/// one line in registry.cc.
struct LoadDescriptor {
  const char* name;
  const char* stresses;  ///< What it stresses, for --help and docs.
  /// Load-specific `key=value` keys it accepts, besides cpus/nice/policy/prio/intensity.
  std::vector<std::string> keys;
  /// True when the load should keep its CPUs busy at its intensity (a shortfall is warned).
  bool cpu_bound = false;
  /// Empty when the load can run here, else why not (e.g. "stress-ng not found in PATH").
  std::string (*supported)();
  /// Checks the load-specific options (sizes, paths) before anything starts.
  Status (*validate)(const LoadParams& params);
  std::unique_ptr<Load> (*create)(const LoadSpec& spec);
};

/// Every load, in table order.
std::span<const LoadDescriptor> Loads();

/// The load named `name`, or a usage error naming the closest one ("did you mean").
Expected<const LoadDescriptor*> FindLoad(std::string_view name);

/// Creates the load for a parsed spec (the spec's name must be in the table).
std::unique_ptr<Load> CreateLoad(const LoadSpec& spec);

}  // namespace rtpulse::load
