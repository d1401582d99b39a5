#include "sys/boot_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>

#include "core/parse.h"
#include "core/printable.h"

namespace rtpulse::sys {
namespace {

std::string NormaliseKey(std::string_view key) {
  std::string out(key);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// One whitespace-separated word, honouring double quotes (which the kernel drops).
std::string NextWord(std::string_view text, size_t& pos) {
  std::string word;
  bool quoted = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (!quoted && IsSpace(c)) break;
    word.push_back(c);
  }
  return word;
}

std::optional<int> CpuNumber(std::string_view text, int last_cpu) {
  if (text == "N") return last_cpu;
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

Error BadList(std::string_view text, std::string_view item) {
  return UsageError(fmt::format(
      "invalid CPU list '{}' at '{}': use numbers and ranges like '0-3,6', 'N' or 'all'",
      Printable(text), Printable(item)));
}

/// "a", "a-b" or "a-b:used/group" into `cpus`.
bool AddItem(std::string_view item, int last_cpu, std::vector<int>& cpus) {
  int used = 1;
  int group = 1;
  if (const size_t colon = item.find(':'); colon != std::string_view::npos) {
    const auto stride = item.substr(colon + 1);
    const size_t slash = stride.find('/');
    if (slash == std::string_view::npos) return false;
    const auto u = CpuNumber(stride.substr(0, slash), -1);
    const auto g = CpuNumber(stride.substr(slash + 1), -1);
    if (!u || !g || *u <= 0 || *g <= 0 || *u > *g) return false;
    used = *u;
    group = *g;
    item = item.substr(0, colon);
  }
  const size_t dash = item.find('-');
  const auto lo = CpuNumber(item.substr(0, dash), last_cpu);
  const auto hi = dash == std::string_view::npos ? lo : CpuNumber(item.substr(dash + 1), last_cpu);
  if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > last_cpu) return false;
  for (int c = *lo; c <= *hi; ++c) {
    if ((c - *lo) % group < used) cpus.push_back(c);
  }
  return true;
}

}  // namespace

BootParams BootParams::Parse(std::string_view cmdline) {
  BootParams params;
  size_t pos = 0;
  while (pos < cmdline.size()) {
    while (pos < cmdline.size() && IsSpace(cmdline[pos])) ++pos;
    if (pos >= cmdline.size()) break;
    const std::string word = NextWord(cmdline, pos);
    if (word == "--") break;
    const size_t eq = word.find('=');
    if (eq == std::string::npos) {
      params.params_.emplace_back(NormaliseKey(word), "");
    } else {
      params.params_.emplace_back(NormaliseKey(word.substr(0, eq)), word.substr(eq + 1));
    }
  }
  return params;
}

bool BootParams::Has(std::string_view key) const {
  return Get(key).has_value();
}

std::optional<std::string> BootParams::Get(std::string_view key) const {
  const std::string wanted = NormaliseKey(key);
  for (auto it = params_.rbegin(); it != params_.rend(); ++it) {
    if (it->first == wanted) return it->second;
  }
  return std::nullopt;
}

Expected<std::vector<int>> ParseKernelCpuList(std::string_view text, int last_cpu) {
  std::vector<int> cpus;
  if (text == "all") {
    for (int c = 0; c <= last_cpu; ++c) cpus.push_back(c);
    return cpus;
  }
  if (text.empty()) return UsageError("empty CPU list");
  size_t pos = 0;
  while (true) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const auto item = text.substr(pos, comma - pos);
    if (!AddItem(item, last_cpu, cpus)) return BadList(text, item);
    if (comma == text.size()) break;
    pos = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

Expected<IsolcpusParam> ParseIsolcpus(std::string_view value, int last_cpu) {
  IsolcpusParam param;
  // Flags come first, each followed by a comma, as in the kernel's
  // housekeeping_isolcpus_setup(): a token starting with a letter is a flag; since 5.7 the
  // kernel skips unknown ones (older kernels ignored the whole parameter).
  const auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  while (!value.empty() && is_letter(value.front())) {
    const size_t comma = value.find(',');
    if (comma == std::string_view::npos) {
      return UsageError(
          fmt::format("isolcpus flag '{}' is not followed by a CPU list", Printable(value)));
    }
    const auto flag = value.substr(0, comma);
    if (flag == "nohz" || flag == "domain" || flag == "managed_irq") {
      param.flags.emplace_back(flag);
    } else {
      param.unknown_flags.emplace_back(flag);
    }
    value.remove_prefix(comma + 1);
  }
  param.domain = param.flags.empty() ||
                 std::find(param.flags.begin(), param.flags.end(), "domain") != param.flags.end();
  auto cpus = ParseKernelCpuList(value, last_cpu);
  if (!cpus) return cpus.error();
  param.cpus = std::move(*cpus);
  return param;
}

std::vector<int> CpusMinus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int> CpusIntersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int> CpusUnion(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Expected<std::vector<int>> ParseCpuMask(std::string_view text) {
  std::vector<int> cpus;
  int bit = 0;
  bool any_digit = false;
  for (auto it = text.rbegin(); it != text.rend(); ++it) {
    const char c = *it;
    if (c == ',' || c == '\n' || c == ' ') continue;
    int nibble = 0;
    if (c >= '0' && c <= '9') {
      nibble = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      nibble = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      nibble = c - 'A' + 10;
    } else {
      return UsageError(fmt::format("invalid CPU mask '{}': expected hex digits", Printable(text)));
    }
    any_digit = true;
    for (int i = 0; i < 4; ++i) {
      if ((nibble & (1 << i)) != 0) cpus.push_back(bit + i);
    }
    bit += 4;
  }
  if (!any_digit) return UsageError("empty CPU mask");
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

}  // namespace rtpulse::sys
