#include "core/kernel_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/gzip.h"
#include "core/parse.h"
#include "core/printable.h"

namespace rtpulse {
namespace {

constexpr std::string_view kPrefix = "CONFIG_";
constexpr std::string_view kNotSetSuffix = " is not set";

bool IsSymbolName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// "CONFIG_X is not set" (after the leading '#') -> "X"; "" when the comment is not one.
std::string_view NotSetName(std::string_view comment) {
  comment = TrimBlanks(comment);
  if (comment.substr(0, kPrefix.size()) != kPrefix) return {};
  if (comment.size() <= kNotSetSuffix.size() ||
      comment.substr(comment.size() - kNotSetSuffix.size()) != kNotSetSuffix) {
    return {};
  }
  auto name =
      comment.substr(kPrefix.size(), comment.size() - kPrefix.size() - kNotSetSuffix.size());
  return IsSymbolName(name) ? name : std::string_view{};
}

/// "# Linux/arm64 6.12.47 Kernel Configuration" -> arch "arm64", version "6.12.47".
bool ParseHeader(std::string_view comment, std::string& arch, std::string& version) {
  comment = TrimBlanks(comment);
  constexpr std::string_view kLinux = "Linux/";
  constexpr std::string_view kTail = " Kernel Configuration";
  if (comment.substr(0, kLinux.size()) != kLinux) return false;
  if (comment.size() <= kTail.size() || comment.substr(comment.size() - kTail.size()) != kTail) {
    return false;
  }
  const auto body = comment.substr(kLinux.size(), comment.size() - kLinux.size() - kTail.size());
  const size_t space = body.find(' ');
  if (space == std::string_view::npos) return false;
  arch = std::string(body.substr(0, space));
  version = std::string(TrimBlanks(body.substr(space + 1)));
  return true;
}

std::string_view StripPrefix(std::string_view name) {
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  return name;
}

}  // namespace

Expected<KernelConfig> KernelConfig::Parse(std::string_view text, std::string_view origin,
                                           bool reject_conflicts) {
  return Read(text, origin, /*lenient=*/false, reject_conflicts);
}

KernelConfig KernelConfig::ParseLenient(std::string_view text, std::string_view origin) {
  // Lenient reading has no error to return: every refusal below is a `continue`.
  return std::move(Read(text, origin, /*lenient=*/true, /*reject_conflicts=*/false).value());
}

Expected<KernelConfig> KernelConfig::Read(std::string_view text, std::string_view origin,
                                          bool lenient, bool reject_conflicts) {
  KernelConfig config;
  config.origin_ = std::string(origin);
  int line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const auto line = TrimBlanks(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_number;
    if (line.empty()) continue;
    ConfigEntry entry;
    entry.line = line_number;
    if (line.front() == '#') {
      const auto comment = line.substr(1);
      if (config.version_.empty() && ParseHeader(comment, config.arch_, config.version_)) {
        continue;
      }
      const auto name = NotSetName(comment);
      if (name.empty()) continue;  // an ordinary comment
      entry.name = std::string(name);
      entry.value.assign(1, 'n');  // not `= "n"`: GCC 12 -Wrestrict false positive
    } else {
      const size_t eq = line.find('=');
      const auto key = line.substr(0, eq);
      if (eq == std::string_view::npos || key.substr(0, kPrefix.size()) != kPrefix ||
          !IsSymbolName(key.substr(kPrefix.size()))) {
        if (lenient) continue;
        return UsageError(fmt::format(
            "{}:{}: cannot read '{}': expected CONFIG_NAME=value or '# CONFIG_NAME is not set'",
            origin, line_number, Printable(line)));
      }
      entry.name = std::string(key.substr(kPrefix.size()));
      entry.value = std::string(TrimBlanks(line.substr(eq + 1)));
      if (entry.value.empty() && !lenient) {
        return UsageError(
            fmt::format("{}:{}: CONFIG_{} has no value: write CONFIG_{}=y, =m, a "
                        "value, or '# CONFIG_{} is not set'",
                        origin, line_number, entry.name, entry.name, entry.name));
      }
    }
    const auto found = config.index_.find(entry.name);
    if (found == config.index_.end()) {
      config.index_.emplace(entry.name, config.entries_.size());
      config.entries_.push_back(std::move(entry));
      continue;
    }
    ConfigEntry* same = &config.entries_[found->second];
    if (reject_conflicts && same->value != entry.value) {
      return UsageError(fmt::format(
          "{}:{}: CONFIG_{} asked as '{}' here and as '{}' on line {}: keep one", origin,
          line_number, entry.name, Printable(entry.value), Printable(same->value), same->line));
    }
    *same = std::move(entry);
  }
  return config;
}

std::optional<std::string> KernelConfig::Get(std::string_view name) const {
  const auto found = index_.find(std::string(StripPrefix(name)));
  if (found == index_.end()) return std::nullopt;
  return entries_[found->second].value;
}

bool KernelConfig::IsOn(std::string_view name) const {
  return Get(name) == "y";
}

bool KernelConfig::IsOff(std::string_view name) const {
  const auto value = Get(name);
  return !value || *value == "n";
}

std::optional<std::pair<int, int>> MajorMinor(std::string_view version) {
  int major = 0;
  int minor = 0;
  const char* begin = version.data();
  const char* end = version.data() + version.size();
  auto [p1, e1] = std::from_chars(begin, end, major);
  if (e1 != std::errc() || p1 == end || *p1 != '.') return std::nullopt;
  auto [p2, e2] = std::from_chars(p1 + 1, end, minor);
  if (e2 != std::errc()) return std::nullopt;
  return std::make_pair(major, minor);
}

Expected<RunningKernelConfig> LoadKernelConfig(const FsRoot& root, std::string_view release,
                                               ConfigReading reading) {
  constexpr const char* kProcConfig = "/proc/config.gz";
  const bool lenient = reading == ConfigReading::kLenient;
  const auto parse = [&](std::string_view text,
                         const std::string& source) -> Expected<RunningKernelConfig> {
    if (lenient)
      return RunningKernelConfig{KernelConfig::ParseLenient(text, root.Path(source)), source};
    auto config = KernelConfig::Parse(text, root.Path(source));
    if (!config) return config.error();
    return RunningKernelConfig{std::move(*config), source};
  };
  std::string why;
  if (auto gz = root.Read(kProcConfig)) {
    auto text = Gunzip(*gz, root.Path(kProcConfig));
    if (text) return parse(*text, kProcConfig);
    if (!lenient) return text.error();
    why = text.error().message + "; ";
  }
  const std::string boot = fmt::format("/boot/config-{}", release);
  if (auto text = root.Read(boot)) return parse(*text, boot);
  return ResourceError(why + fmt::format("neither /proc/config.gz nor {} is readable", boot));
}

}  // namespace rtpulse
