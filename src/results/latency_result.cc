#include "results/latency_result.h"

#include <algorithm>
#include <cstdint>

namespace rtpulse::results {

const char* BoundName(Bound bound) {
  switch (bound) {
    case Bound::kExact:
      return "exact";
    case Bound::kLowerBound:
      return "lower_bound";
    case Bound::kUpperBound:
      return "upper_bound";
    case Bound::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Bound BoundFromName(const std::string& name) {
  if (name == "exact") return Bound::kExact;
  if (name == "lower_bound") return Bound::kLowerBound;
  if (name == "upper_bound") return Bound::kUpperBound;
  return Bound::kUnknown;  // a name this version does not know promises nothing
}

std::string WithBound(const std::string& value, Bound bound, std::string_view lower,
                      std::string_view upper) {
  switch (bound) {
    case Bound::kExact:
      return value;
    case Bound::kLowerBound:
      return std::string(lower) + value;
    case Bound::kUpperBound:
      return std::string(upper) + value;
    case Bound::kUnknown:
      return "?";
  }
  return "?";
}

Bound CombineBounds(Bound a, Bound b) {
  if (a == Bound::kExact) return b;
  if (b == Bound::kExact || a == b) return a;
  return Bound::kUnknown;
}

StatBounds MergeBounds(const std::vector<ProbeResult>& probes) {
  StatBounds out;
  bool mean_inexact = false;
  for (const auto& p : probes) {
    out.min = CombineBounds(out.min, p.bounds.min);
    out.max = CombineBounds(out.max, p.bounds.max);
    out.mean = CombineBounds(out.mean, p.bounds.mean);
    out.stddev = CombineBounds(out.stddev, p.bounds.stddev);
    mean_inexact |= p.bounds.mean != Bound::kExact;
    const auto& q = p.bounds;
    if (q.percentiles_lower_from_ns) {
      out.percentiles_lower_from_ns =
          std::min(out.percentiles_lower_from_ns.value_or(INT64_MAX), *q.percentiles_lower_from_ns);
    }
    if (q.percentiles_upper_to_ns) {
      out.percentiles_upper_to_ns =
          std::max(out.percentiles_upper_to_ns.value_or(INT64_MIN), *q.percentiles_upper_to_ns);
    }
    out.percentiles_unknown |= q.percentiles_unknown;
    for (const auto& r : p.bounds.reasons) {
      if (std::find(out.reasons.begin(), out.reasons.end(), r) == out.reasons.end()) {
        out.reasons.push_back(r);
      }
    }
  }
  if (mean_inexact && probes.size() > 1) out.stddev = Bound::kUnknown;
  return out;
}

}  // namespace rtpulse::results
