#pragma once

#include <functional>

namespace rtpulse {

/// True when `a` and `b` are the same value. For the comparisons that are meant to be exact
/// (a percentile the user typed as 99.9, a sample tied with the median, a zero that means
/// "no spread"), where a tolerance would be wrong. Spelled as a function so that
/// -Wfloat-equal still flags every accidental `==` on floating point elsewhere.
constexpr bool ExactlyEqual(double a, double b) {
  return std::equal_to<double>{}(a, b);
}

}  // namespace rtpulse
