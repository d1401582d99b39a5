#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtpulse {

/// `vcgencmd get_throttled` bits. 0-3 are "now"; 16-19 the same four "since boot".
enum ThrottledBit : uint32_t {
  kUnderVoltageNow = 1u << 0,
  kArmFreqCappedNow = 1u << 1,
  kThrottledNow = 1u << 2,
  kSoftTempLimitNow = 1u << 3,
};
/// Shift from a "now" bit to its "has occurred since boot" twin.
constexpr int kThrottledSinceBootShift = 16;

/// The Raspberry Pi firmware's throttling word (`vcgencmd get_throttled`), as the audit
/// (`check`) and the monitor both read it.
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

/// Parses `throttled=0x50005` (the whole output of `vcgencmd get_throttled`; surrounding
/// blanks and line ends are ignored). nullopt when the text is something else (an error
/// message, a number without 0x, more than 32 bits).
std::optional<ThrottledFlags> ParseGetThrottled(std::string_view output);

}  // namespace rtpulse
