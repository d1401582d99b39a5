#include "core/memory_facts.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "core/parse.h"

namespace rtpulse {

std::optional<uint64_t> MeminfoBytes(std::string_view meminfo, std::string_view name) {
  while (!meminfo.empty()) {
    const size_t eol = std::min(meminfo.find('\n'), meminfo.size());
    std::string_view line = meminfo.substr(0, eol);
    meminfo.remove_prefix(std::min(eol + 1, meminfo.size()));
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') {
      continue;
    }
    const std::string_view value = TrimBlanks(line.substr(name.size() + 1));
    uint64_t kib = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), kib);
    if (ec != std::errc{} || end == value.data()) return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

std::optional<uint64_t> MeminfoBytes(const FsRoot& root, std::string_view name) {
  const auto text = root.Read("/proc/meminfo");
  if (!text) return std::nullopt;
  return MeminfoBytes(*text, name);
}

uint64_t LastLevelCacheBytes(const FsRoot& root) {
  uint64_t largest = 0;
  const std::string base = "/sys/devices/system/cpu/cpu0/cache";
  for (const std::string& entry : root.List(base)) {
    if (!entry.starts_with("index")) continue;
    const auto text = root.ReadLine(base + "/" + entry + "/size");
    if (!text) continue;
    const std::string_view t = TrimBlanks(*text);
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (ec != std::errc{} || end == t.data()) continue;
    const std::string_view unit(end, static_cast<size_t>(t.data() + t.size() - end));
    uint64_t scale = 1;
    if (unit == "K") scale = uint64_t{1} << 10;
    if (unit == "M") scale = uint64_t{1} << 20;
    if (unit == "G") scale = uint64_t{1} << 30;
    largest = std::max(largest, n * scale);
  }
  return largest;
}

}  // namespace rtpulse
