#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "load/load.h"

namespace rtpulse::load {

/// One load-specific `key=value` option: its type, range, default and help. The spec parser
/// checks every given option against its row (CheckLoadOptions), the load reads its value
/// through the row (WholeOption, ...), and `rtpulse load --list` prints the rows.
struct LoadOption {
  enum class Kind {
    kWhole,   ///< a whole number in [min, max]
    kFlag,    ///< 0 or 1
    kChoice,  ///< one of `choices`
    kTime,    ///< a time with its unit, in [min, max] nanoseconds
    kText,    ///< any text (a path); the load's `validate` checks what it must
  };
  const char* key;
  Kind kind;
  const char* help;
  /// The default as the user would write it ("4", "udp", "2s"), or what it depends on when
  /// `machine_default` computes it ("4x the last-level cache").
  const char* fallback;
  int64_t min = 0;
  int64_t max = 0;
  std::vector<std::string> choices = {};
  /// kWhole only: a default that depends on the machine, computed when the option is absent.
  int64_t (*machine_default)() = nullptr;
};

/// One row of the load table (the stress-ng pattern): adding a load touches one new file and
/// one line in registry.cc.
struct LoadDescriptor {
  const char* name;
  const char* stresses;  ///< What it stresses, for --help and docs.
  /// Load-specific `key=value` options it accepts, besides cpus/nice/policy/prio/intensity.
  std::vector<LoadOption> options;
  /// True when the load should keep its CPUs busy at its intensity (a shortfall is warned).
  bool cpu_bound = false;
  /// Empty when the load can run here, else why not (e.g. "stress-ng not found in PATH").
  std::string (*supported)();
  /// Checks what the option table cannot (a folder is writable, a program exists) before
  /// anything starts; runs after every option passed its row. Null: nothing more to check.
  Status (*validate)(const LoadParams& params);
  std::unique_ptr<Load> (*create)(const LoadSpec& spec);
};

/// Every option `params` holds against its row of `d.options`: a usage error naming the key,
/// the value and what to give instead.
Status CheckLoadOptions(const LoadDescriptor& d, const LoadParams& params);

/// The option's value (checked by CheckLoadOptions), or its default when absent.
int64_t WholeOption(const LoadParams& params, const LoadOption& option);
bool FlagOption(const LoadParams& params, const LoadOption& option);
int64_t TimeOption(const LoadParams& params, const LoadOption& option);      ///< nanoseconds
std::string TextOption(const LoadParams& params, const LoadOption& option);  ///< kChoice, kText

/// The option's key and the values it takes, for `load --list`: "kb=1..65536",
/// "proto=udp|tcp", "grace=0s..60s", "dir=PATH".
std::string DescribeLoadOption(const LoadOption& option);

/// Every load, in table order.
std::span<const LoadDescriptor> Loads();

/// The load named `name`, or a usage error naming the closest one ("did you mean").
Expected<const LoadDescriptor*> FindLoad(std::string_view name);

/// Creates the load for a parsed spec (the spec's name must be in the table).
std::unique_ptr<Load> CreateLoad(const LoadSpec& spec);

}  // namespace rtpulse::load
