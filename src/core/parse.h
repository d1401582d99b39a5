#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse {

/// The fields of one CSV line split at `separator`, as views into `line` (no quoting: the
/// project's CSV files hold numbers and plain words). "a,,b," gives {"a", "", "b", ""}.
std::vector<std::string_view> SplitFields(std::string_view line, char separator = ',');

/// `text` without the blanks (space, tab, CR, LF) at either end.
std::string_view TrimBlanks(std::string_view text);

/// Parses a Linux CPU list ("0-3,6", "2", "0,2-3") into sorted, unique CPU numbers.
/// The same syntax as /sys/devices/system/cpu/online and taskset -c.
Expected<std::vector<int>> ParseCpuList(std::string_view text);

/// Formats CPUs back into the compact list syntax ("0-3,6").
std::string FormatCpuList(const std::vector<int>& cpus);

/// Parses a run length as cyclictest's -D does: a number with an optional suffix
/// s, m, h or d (no suffix means seconds). Returns nanoseconds; 0 is allowed ("no limit").
Expected<int64_t> ParseDurationNs(std::string_view text);

/// Parses a time with a unit: "2ms", "500us", "100ns", "1.5s". A bare number is rejected
/// unless `default_unit_ns` is non-zero, in which case it is multiplied by it.
Expected<int64_t> ParseTimeNs(std::string_view text, int64_t default_unit_ns = 0);

/// A time in the largest unit that holds it exactly, as ParseTimeNs reads it back: "60s",
/// "500ms", "20us", "7ns" ("0s" for zero).
std::string FormatTimeNs(int64_t ns);

/// Parses a frequency: "10Hz", "2.5kHz", "10" (Hz). Returns Hz.
Expected<double> ParseRateHz(std::string_view text);

/// Parses a byte size with binary units: "4096" (bytes), "512K", "64M", "32MiB", "1G", "2TB".
/// Errors name `option` and the text, and refuse an unknown unit or a size past 2^64 bytes.
Expected<uint64_t> ParseByteSize(std::string_view option, std::string_view text);

/// Parses a whole non-negative number, rejecting trailing garbage and overflow.
Expected<int64_t> ParseInt(std::string_view text, std::string_view what);

/// As ParseInt, but negative numbers are allowed (e.g. sched_rt_runtime_us = -1).
Expected<int64_t> ParseSignedInt(std::string_view text, std::string_view what);

}  // namespace rtpulse
