#include "sys/process_facts.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <map>

#include "core/printable.h"

namespace rtpulse::sys {
namespace {

std::optional<uint64_t> Limit(rlim_t value) {
  if (value == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(value);
}

/// The effective set via capget(2) (no libcap); 0 if the call fails.
uint64_t EffectiveCaps() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  return static_cast<uint64_t>(data[0].effective) |
         (static_cast<uint64_t>(data[1].effective) << 32);
}

Expected<uint64_t> Number(std::string_view text, std::string_view key) {
  int base = 10;
  if (text.substr(0, 2) == "0x") {
    text.remove_prefix(2);
    base = 16;
  }
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return UsageError(fmt::format("{}: invalid {} value '{}': expected a number", kProcessFactsEnv,
                                  key, Printable(text)));
  }
  return value;
}

using LimitPair = std::pair<std::optional<uint64_t>, std::optional<uint64_t>>;

Expected<LimitPair> Limits(std::string_view text, std::string_view key) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return UsageError(
        fmt::format("{}: {} needs soft:hard, got '{}'", kProcessFactsEnv, key, Printable(text)));
  }
  LimitPair pair;
  for (auto [part, out] : {std::pair{text.substr(0, colon), &pair.first},
                           std::pair{text.substr(colon + 1), &pair.second}}) {
    if (part == "unlimited") continue;
    auto value = Number(part, key);
    if (!value) return value.error();
    *out = *value;
  }
  return pair;
}

}  // namespace

ProcessFacts ProbeProcess() {
  ProcessFacts facts;
  facts.euid = geteuid();
  facts.cap_effective = EffectiveCaps();
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    facts.memlock_soft_bytes = Limit(limit.rlim_cur);
    facts.memlock_hard_bytes = Limit(limit.rlim_max);
  }
  if (getrlimit(RLIMIT_RTPRIO, &limit) == 0) {
    facts.rtprio_soft = Limit(limit.rlim_cur);
    facts.rtprio_hard = Limit(limit.rlim_max);
  }
  return facts;
}

Expected<ProcessFacts> ParseProcessFacts(std::string_view spec) {
  std::map<std::string, std::string, std::less<>> fields;
  size_t pos = 0;
  while (pos < spec.size()) {
    const size_t comma = std::min(spec.find(',', pos), spec.size());
    const auto item = spec.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return UsageError(
          fmt::format("{}: expected key=value, got '{}'", kProcessFactsEnv, Printable(item)));
    }
    fields[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
    pos = comma + 1;
  }
  for (const char* key : {"euid", "cap_eff", "memlock", "rtprio"}) {
    if (fields.count(key) == 0) {
      return UsageError(fmt::format(
          "{}: '{}' is missing (give euid=N,cap_eff=0xHEX,memlock=SOFT:HARD,rtprio=SOFT:HARD)",
          kProcessFactsEnv, key));
    }
  }
  if (fields.size() != 4) {
    return UsageError(fmt::format("{}: unknown key in '{}' (keys: euid, cap_eff, memlock, rtprio)",
                                  kProcessFactsEnv, spec));
  }
  ProcessFacts facts;
  facts.injected = true;
  auto euid = Number(fields["euid"], "euid");
  if (!euid) return euid.error();
  facts.euid = static_cast<uint32_t>(*euid);
  auto caps = Number(fields["cap_eff"], "cap_eff");
  if (!caps) return caps.error();
  facts.cap_effective = *caps;
  auto memlock = Limits(fields["memlock"], "memlock");
  if (!memlock) return memlock.error();
  std::tie(facts.memlock_soft_bytes, facts.memlock_hard_bytes) = *memlock;
  auto rtprio = Limits(fields["rtprio"], "rtprio");
  if (!rtprio) return rtprio.error();
  std::tie(facts.rtprio_soft, facts.rtprio_hard) = *rtprio;
  return facts;
}

}  // namespace rtpulse::sys
