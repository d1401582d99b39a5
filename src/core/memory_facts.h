#pragma once

// Two machine facts that several layers need (the control workload's work set, the memory
// and cache loads' sizes, the monitor's memory columns): one reader each, under an FsRoot.

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/fs_root.h"

namespace rtpulse {

/// The field `name` ("MemAvailable", "MemTotal") of a /proc/meminfo text, in bytes (the file
/// prints kB); nullopt when the field is absent or not a number.
std::optional<uint64_t> MeminfoBytes(std::string_view meminfo, std::string_view name);

/// The same, read from /proc/meminfo under `root`; nullopt when the file cannot be read.
std::optional<uint64_t> MeminfoBytes(const FsRoot& root, std::string_view name);

/// The largest cache of cpu0 in bytes (/sys/devices/system/cpu/cpu0/cache/index*/size:
/// "48K", "2048K", "1M"); 0 when the machine does not say.
uint64_t LastLevelCacheBytes(const FsRoot& root);

}  // namespace rtpulse
