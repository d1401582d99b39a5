#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "load/load.h"

namespace rtpulse::load {

/// Parses load SPECs (docs/loads.md). Each argument holds one or more specs joined by `+`:
///   NAME[:key=value,...]             built-in loads, e.g. "cpu:cpus=0-1,intensity=50"
///   stress-ng[:[key=value ...] ARGS]  ARGS from the first word starting with '-' go to
///                                    stress-ng verbatim, e.g. "stress-ng:cpus=1 --cpu 2"
/// Every error is a usage error naming the bad value; CPUs must be online and allowed.
Expected<std::vector<LoadSpec>> ParseLoadSpecs(const std::vector<std::string>& args);

/// One spec (no `+`).
Expected<LoadSpec> ParseLoadSpec(std::string_view text);

/// The online CPUs (/sys/devices/system/cpu/online through FsRoot::System()).
std::vector<int> OnlineCpus();

}  // namespace rtpulse::load
