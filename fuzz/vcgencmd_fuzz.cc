// The Raspberry Pi firmware's outputs as the monitor and the audit read them
// (monitor/vcgencmd.h, core/throttled.h): measure_volts, pmic_read_adc and get_throttled.
// They return nullopt for text they do not understand; none may crash or misread.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check_error.h"
#include "core/throttled.h"
#include "monitor/vcgencmd.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)monitor::ParseVolts(text);
  if (auto pmic = monitor::ParsePmicReadAdc(text)) {
    if (std::isnan(pmic->power_w)) fuzz::FuzzFail("pmic_read_adc power is NaN for", text);
  }
  if (auto flags = ParseGetThrottled(text)) {
    (void)flags->Now();
    (void)flags->SinceBoot();
    (void)monitor::DescribeThrottled(flags->UnknownBits());
  }
  return 0;
}
