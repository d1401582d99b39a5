#include "core/suggest.h"

#include <algorithm>

namespace rtpulse {

std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    // Levenshtein distance, two rows.
    std::vector<size_t> prev(c.size() + 1);
    std::vector<size_t> cur(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t sub = prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    const bool prefix = c.rfind(word, 0) == 0 && !word.empty();
    const size_t distance = prefix ? 1 : prev[c.size()];
    if (distance < best_distance) {
      best_distance = distance;
      best = c;
    }
  }
  return best;
}

}  // namespace rtpulse
