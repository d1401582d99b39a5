#pragma once

#include <cstdint>
#include <string>

#include "load/registry.h"

// The rows of the load table, one per file.
namespace rtpulse::load {

LoadDescriptor CpuLoad();
LoadDescriptor MemoryLoad();
LoadDescriptor CacheLoad();
LoadDescriptor IoLoad();
LoadDescriptor SwitchLoad();
LoadDescriptor NetLoad();
LoadDescriptor StressNgLoad();
LoadDescriptor CommandLoad();

/// Size of the largest CPU cache (core/memory_facts.h), or 8 MiB if unknown: what the cache
/// and memory loads size their buffers by.
int64_t LoadCacheBytes();

/// Always supported.
inline std::string AlwaysSupported() {
  return "";
}

}  // namespace rtpulse::load
