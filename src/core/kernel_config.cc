#include "sys/kernel_config.h"

#include <fmt/format.h>

#include "core/gzip.h"

namespace rtpulse::sys {
namespace {

constexpr std::string_view kPrefix = "CONFIG_";
constexpr std::string_view kNotSetPrefix = "# CONFIG_";
constexpr std::string_view kNotSetSuffix = " is not set";

std::string_view StripPrefix(std::string_view name) {
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  return name;
}

bool IsOptionName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

KernelConfig KernelConfig::Parse(std::string_view text) {
  KernelConfig config;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.substr(0, kNotSetPrefix.size()) == kNotSetPrefix &&
        line.size() > kNotSetSuffix.size() &&
        line.substr(line.size() - kNotSetSuffix.size()) == kNotSetSuffix) {
      const auto name = line.substr(kNotSetPrefix.size(),
                                    line.size() - kNotSetPrefix.size() - kNotSetSuffix.size());
      if (IsOptionName(name)) config.options_[std::string(name)] = "n";
      continue;
    }
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const auto name = line.substr(kPrefix.size(), eq - kPrefix.size());
    if (IsOptionName(name)) config.options_[std::string(name)] = std::string(line.substr(eq + 1));
  }
  return config;
}

std::optional<std::string> KernelConfig::Get(std::string_view name) const {
  const auto it = options_.find(StripPrefix(name));
  if (it == options_.end()) return std::nullopt;
  return it->second;
}

bool KernelConfig::IsOn(std::string_view name) const {
  return Get(name) == "y";
}

bool KernelConfig::IsOff(std::string_view name) const {
  const auto value = Get(name);
  return !value || *value == "n";
}

std::optional<RunningKernelConfig> LoadKernelConfig(const FsRoot& root, std::string_view release,
                                                    std::string* problem) {
  constexpr const char* kProcConfig = "/proc/config.gz";
  std::string why;
  if (auto gz = root.Read(kProcConfig)) {
    auto text = Gunzip(*gz, kProcConfig);
    if (text) return RunningKernelConfig{KernelConfig::Parse(*text), kProcConfig};
    why = text.error().message + "; ";
  }
  const std::string boot = fmt::format("/boot/config-{}", release);
  if (auto text = root.Read(boot)) return RunningKernelConfig{KernelConfig::Parse(*text), boot};
  if (problem != nullptr) {
    *problem = why + fmt::format("neither /proc/config.gz nor {} is readable", boot);
  }
  return std::nullopt;
}

}  // namespace rtpulse::sys
