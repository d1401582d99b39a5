#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtpulse::sys {

/// The Raspberry Pi firmware's throttling word (`vcgencmd get_throttled`). Bits 0-3 describe
/// now, bits 16-19 the same four conditions "has occurred since boot".
struct ThrottledFlags {
  uint32_t raw = 0;

  /// Conditions present now: "under-voltage", "ARM frequency capped", "throttled",
  /// "soft temperature limit", in bit order.
  std::vector<std::string> Now() const;
  /// Conditions that have occurred since boot (bits 16-19).
  std::vector<std::string> SinceBoot() const;
  /// Bits outside 0-3 and 16-19 (unknown to this version of rtpulse).
  uint32_t UnknownBits() const;
};

/// Parses `throttled=0x50005` (the whole output of `vcgencmd get_throttled`); nullopt when
/// the text is something else (e.g. an error message).
std::optional<ThrottledFlags> ParseGetThrottled(std::string_view output);

}  // namespace rtpulse::sys
