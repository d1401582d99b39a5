#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/throttled.h"  // get_throttled: ParseGetThrottled and the bits, shared with check

namespace rtpulse::monitor {

/// "volt=0.7200V" -> 0.72.
std::optional<double> ParseVolts(std::string_view text);

/// Pi 5 `vcgencmd pmic_read_adc`, rails paired by name (X_A with X_V; the bracketed ADC
/// channel numbers do not pair them).
struct PmicReading {
  double power_w = 0;  ///< Sum of V x I over the paired rails (excludes conversion losses).
  int rails = 0;       ///< How many rails had both a current and a voltage.
  std::optional<double> ext5v_v;  ///< Supply input voltage (no current line exists for it).
};
/// nullopt when no rail pairs (a board without the PMIC prints `error=1 ...`).
std::optional<PmicReading> ParsePmicReadAdc(std::string_view text);

/// "under-voltage, throttled" for the set bits among the four flags of `bits` (shifted down
/// already for the since-boot half); "none" when none is set.
std::string DescribeThrottled(uint32_t bits);

}  // namespace rtpulse::monitor
