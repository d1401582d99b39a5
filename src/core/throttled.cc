#include "core/throttled.h"

#include <array>
#include <charconv>

namespace rtpulse {
namespace {

constexpr std::array<const char*, 4> kConditions = {"under-voltage", "ARM frequency capped",
                                                    "throttled", "soft temperature limit"};
constexpr uint32_t kKnownBits = 0xFu | (0xFu << kThrottledSinceBootShift);

std::vector<std::string> Names(uint32_t nibble) {
  std::vector<std::string> names;
  for (size_t bit = 0; bit < kConditions.size(); ++bit) {
    if ((nibble & (1u << bit)) != 0) names.emplace_back(kConditions[bit]);
  }
  return names;
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

std::vector<std::string> ThrottledFlags::Now() const {
  return Names(raw & 0xFu);
}

std::vector<std::string> ThrottledFlags::SinceBoot() const {
  return Names((raw >> kThrottledSinceBootShift) & 0xFu);
}

uint32_t ThrottledFlags::UnknownBits() const {
  return raw & ~kKnownBits;
}

std::optional<ThrottledFlags> ParseGetThrottled(std::string_view output) {
  while (!output.empty() && IsBlank(output.front())) output.remove_prefix(1);
  while (!output.empty() && IsBlank(output.back())) output.remove_suffix(1);
  constexpr std::string_view kPrefix = "throttled=";
  if (output.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  output.remove_prefix(kPrefix.size());
  // vcgencmd always prints the 0x; a bare number is some other program's output.
  if (output.substr(0, 2) != "0x" && output.substr(0, 2) != "0X") return std::nullopt;
  output.remove_prefix(2);
  if (output.empty()) return std::nullopt;
  ThrottledFlags flags;
  const char* end = output.data() + output.size();
  // from_chars into 32 bits refuses a wider word (result_out_of_range).
  auto [ptr, ec] = std::from_chars(output.data(), end, flags.raw, 16);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return flags;
}

}  // namespace rtpulse
