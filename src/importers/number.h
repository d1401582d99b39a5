#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

namespace rtpulse::importers {

enum class NumberError { kNone, kNoDigits, kTooLarge };

/// Parses "[+-]digits[.digits][e[+-]digits]" starting at text[pos] and scales it by
/// `unit_ns`, rounding to the nearest nanosecond. On success `pos` is just past the number.
/// Plain decimals take an integer-only path (no strtod per line); exponents use from_chars.
inline NumberError ParseScaledNs(std::string_view text, size_t& pos, int64_t unit_ns,
                                 int64_t& out_ns) {
  const size_t start = pos;
  size_t i = pos;
  const size_t n = text.size();
  bool negative = false;
  if (i < n && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  uint64_t whole = 0;
  size_t whole_digits = 0;
  while (i < n && static_cast<unsigned>(text[i] - '0') < 10) {
    if (whole_digits++ < 19) whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    ++i;
  }
  uint64_t frac = 0;
  uint64_t frac_scale = 1;
  size_t frac_digits = 0;
  if (i < n && text[i] == '.') {
    ++i;
    while (i < n && static_cast<unsigned>(text[i] - '0') < 10) {
      if (frac_digits < 18) {
        frac = frac * 10 + static_cast<unsigned>(text[i] - '0');
        frac_scale *= 10;
      }
      ++frac_digits;
      ++i;
    }
  }
  if (whole_digits + frac_digits == 0) return NumberError::kNoDigits;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    // Rare in latency logs: let the standard parser do the whole token.
    double value = 0;
    const char* first = text.data() + start + ((text[start] == '+') ? 1 : 0);
    const auto r = std::from_chars(first, text.data() + n, value);
    if (r.ec != std::errc() || !std::isfinite(value)) return NumberError::kTooLarge;
    const double ns = value * static_cast<double>(unit_ns);
    if (std::fabs(ns) >= 9.2e18) return NumberError::kTooLarge;
    out_ns = std::llround(ns);
    pos = static_cast<size_t>(r.ptr - text.data());
    return NumberError::kNone;
  }
  const auto unit = static_cast<uint64_t>(unit_ns);
  if (whole_digits > 18 || whole > static_cast<uint64_t>(INT64_MAX) / unit) {
    return NumberError::kTooLarge;
  }
  uint64_t value = whole * unit;
  if (frac_digits > 0) {
    // Rounded half up: (frac * unit + scale/2) / scale, in 64 bits when that fits (a
    // 128-bit division is a library call).
    uint64_t scaled = 0;
    if (!__builtin_mul_overflow(frac, unit, &scaled) && scaled <= UINT64_MAX - frac_scale / 2) {
      value += (scaled + frac_scale / 2) / frac_scale;
    } else {
      __extension__ using U128 = unsigned __int128;
      value +=
          static_cast<uint64_t>((static_cast<U128>(frac) * unit + frac_scale / 2) / frac_scale);
    }
    if (value > static_cast<uint64_t>(INT64_MAX)) return NumberError::kTooLarge;
  }
  out_ns = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  pos = i;
  return NumberError::kNone;
}

}  // namespace rtpulse::importers
