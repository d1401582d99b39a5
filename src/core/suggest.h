#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rtpulse {

/// Closest of `candidates` to `word` by edit distance (a prefix counts as distance 1), or ""
/// when nothing is close: the "did you mean" of command, load and option names.
std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace rtpulse
