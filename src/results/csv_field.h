#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include "core/error.h"
#include "core/printable.h"

// One integer field of the per-record CSV logs rtpulse reads back (jobs.csv, frames.csv).
namespace rtpulse::results {

/// `field` as a whole number; otherwise a usage error "WHERE: COLUMN 'FIELD' is not a whole
/// number" followed by `hint` (what the file holds there and how to rewrite it).
inline Expected<int64_t> ParseCsvInteger(std::string_view field, const std::string& where,
                                         const char* column, std::string_view hint) {
  int64_t value = 0;
  const char* end = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(field.data(), end, value);
  if (field.empty() || ec != std::errc() || ptr != end) {
    return UsageError(
        fmt::format("{}: {} '{}' is not a whole number{}", where, column, Printable(field), hint));
  }
  return value;
}

}  // namespace rtpulse::results
