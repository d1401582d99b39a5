#include "sys/throttled.h"

#include <array>
#include <charconv>

namespace rtpulse::sys {
namespace {

constexpr std::array<const char*, 4> kConditions = {"under-voltage", "ARM frequency capped",
                                                    "throttled", "soft temperature limit"};
constexpr int kSinceBootShift = 16;
constexpr uint32_t kKnownBits = 0xFu | (0xFu << kSinceBootShift);

std::vector<std::string> Names(uint32_t nibble) {
  std::vector<std::string> names;
  for (size_t bit = 0; bit < kConditions.size(); ++bit) {
    if ((nibble & (1u << bit)) != 0) names.emplace_back(kConditions[bit]);
  }
  return names;
}

}  // namespace

std::vector<std::string> ThrottledFlags::Now() const {
  return Names(raw & 0xFu);
}

std::vector<std::string> ThrottledFlags::SinceBoot() const {
  return Names((raw >> kSinceBootShift) & 0xFu);
}

uint32_t ThrottledFlags::UnknownBits() const {
  return raw & ~kKnownBits;
}

std::optional<ThrottledFlags> ParseGetThrottled(std::string_view output) {
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) {
    output.remove_suffix(1);
  }
  constexpr std::string_view kPrefix = "throttled=";
  if (output.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  output.remove_prefix(kPrefix.size());
  if (output.substr(0, 2) == "0x" || output.substr(0, 2) == "0X") output.remove_prefix(2);
  if (output.empty()) return std::nullopt;
  ThrottledFlags flags;
  const char* end = output.data() + output.size();
  auto [ptr, ec] = std::from_chars(output.data(), end, flags.raw, 16);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return flags;
}

}  // namespace rtpulse::sys
