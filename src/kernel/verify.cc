#include "kernel/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/printable.h"

namespace rtpulse::kernel {
namespace {

bool Satisfies(std::string_view wanted, const std::optional<std::string>& actual) {
  if (wanted == "n") return !actual || *actual == "n";
  if (!actual) return false;
  if (wanted == "m") return *actual == "m" || *actual == "y";
  return *actual == wanted;
}

/// The preemption model a config ended up with, for "fell back to ..." messages.
std::string PreemptionModel(const KernelConfig& config) {
  constexpr std::array kModels = {"PREEMPT_RT", "PREEMPT", "PREEMPT_VOLUNTARY", "PREEMPT_NONE"};
  for (const char* model : kModels) {
    if (config.IsOn(model)) return model;
  }
  return "an unknown model";
}

std::string HzChoice(const KernelConfig& config) {
  auto hz = config.Get("HZ");
  return hz ? fmt::format("CONFIG_HZ={}", *hz) : std::string("another HZ");
}

bool OlderThan(const KernelConfig& config, int major, int minor) {
  const auto mm = MajorMinor(config.version());
  return mm && *mm < std::make_pair(major, minor);
}

std::string ExplainPreemptRt(const KernelConfig& config) {
  if (!config.IsOn("ARCH_SUPPORTS_RT")) {
    if (OlderThan(config, 6, 12)) {
      return fmt::format(
          "this is a {} kernel without ARCH_SUPPORTS_RT: mainline gained PREEMPT_RT for "
          "arm64/x86/riscv only in 6.12; use a 6.12+ tree (Raspberry Pi rpi-6.12.y or newer) "
          "or apply the out-of-tree RT patch for {}",
          config.version(), config.version());
    }
    return fmt::format(
        "ARCH_SUPPORTS_RT is not set: this architecture{} cannot select PREEMPT_RT (arm64, "
        "x86 and riscv can from 6.12 on; older trees need the out-of-tree RT patch)",
        config.arch().empty() ? "" : " (" + config.arch() + ")");
  }
  if (!config.IsOn("EXPERT")) {
    return fmt::format(
        "PREEMPT_RT depends on EXPERT, which is off, so olddefconfig fell back to {}: add "
        "CONFIG_EXPERT=y to the fragment",
        PreemptionModel(config));
  }
  return fmt::format("Kconfig chose {} instead: check the preemption model choice",
                     PreemptionModel(config));
}

/// A specific explanation for the traps this project has hit; "" when none applies.
std::string ExplainTrap(const OptionCheck& check, const KernelConfig& config) {
  const std::string& name = check.name;
  if (name == "PREEMPT_RT" && check.wanted == "y") return ExplainPreemptRt(config);
  if (name == "EXPERT" && check.wanted == "y") {
    return "EXPERT is off: PREEMPT_RT depends on it and is silently dropped without it";
  }
  if (name == "NTP_PPS" && check.wanted != "n" && config.IsOn("NO_HZ_COMMON")) {
    return "NTP_PPS depends on !NO_HZ_COMMON and NO_HZ_COMMON is on (selected by NO_HZ_FULL "
           "or NO_HZ_IDLE): the two cannot coexist; remove NTP_PPS from the fragment and let "
           "chrony/gpsd discipline the clock from /dev/ppsN in user space";
  }
  if ((name == "NO_HZ_FULL" || name == "RCU_NOCB_CPU" || name == "CPU_ISOLATION") &&
      check.wanted != "n") {
    if (!config.IsOn("SMP")) return fmt::format("{} needs SMP, which is off", name);
    if (name == "NO_HZ_FULL" && !config.IsOn("HAVE_CONTEXT_TRACKING_USER")) {
      return "NO_HZ_FULL needs HAVE_CONTEXT_TRACKING_USER, which this architecture does not "
             "provide";
    }
    if (name != "NO_HZ_FULL" && !config.IsOn("NO_HZ_FULL")) {
      return fmt::format("{} is selected by NO_HZ_FULL, which is off", name);
    }
  }
  if (name.rfind("HZ_", 0) == 0 && check.wanted == "y") {
    return fmt::format("the timer frequency is a choice and Kconfig kept {}", HzChoice(config));
  }
  if (name.rfind("CPU_FREQ_", 0) == 0 && check.wanted != "n" && !config.IsOn("CPU_FREQ")) {
    return fmt::format("{} depends on CPU_FREQ, which is off: add CONFIG_CPU_FREQ=y", name);
  }
  if (name.rfind("PPS_", 0) == 0 && check.wanted != "n" && !config.Get("PPS")) {
    return fmt::format("{} depends on PPS, which is off: add CONFIG_PPS=y", name);
  }
  if (name == "IKCONFIG_PROC" && check.wanted == "y" && !config.IsOn("IKCONFIG")) {
    return "IKCONFIG_PROC depends on IKCONFIG=y";
  }
  if (name == "RCU_BOOST" && check.wanted == "y" && !config.IsOn("PREEMPT_RT")) {
    return "RCU_BOOST depends on PREEMPT_RT (or RCU_EXPERT with PREEMPT_RCU)";
  }
  return "";
}

std::string GenericReason(const OptionCheck& check) {
  if (check.wanted == "n") {
    return fmt::format(
        "asked off but the config has CONFIG_{}={}: another option selects it, or it has no "
        "prompt in this configuration and cannot be turned off",
        check.name, check.actual.value_or("?"));
  }
  if (check.state == OptionState::kMissing) {
    return fmt::format(
        "CONFIG_{} is not in the config: its dependencies are not met or this kernel does not "
        "know it (look it up with '/' in make menuconfig)",
        check.name);
  }
  if (check.wanted == "y" && check.actual == "m") {
    return "built as a module, asked built in";
  }
  return fmt::format("Kconfig kept '{}': a dependency or a choice overrode the request",
                     Printable(check.actual.value_or("?")));
}

}  // namespace

std::string_view StateName(OptionState state) {
  switch (state) {
    case OptionState::kSet:
      return "set";
    case OptionState::kDropped:
      return "dropped";
    case OptionState::kMissing:
      return "missing";
  }
  return "?";
}

size_t VerifyReport::Count(OptionState state) const {
  return static_cast<size_t>(std::count_if(checks.begin(), checks.end(),
                                           [state](const auto& c) { return c.state == state; }));
}

bool VerifyReport::ok() const {
  return problems.empty() && Count(OptionState::kSet) == checks.size();
}

VerifyReport Verify(const KernelConfig& fragment, const KernelConfig& config) {
  VerifyReport report;
  for (const auto& entry : fragment.entries()) {
    OptionCheck check;
    check.name = entry.name;
    check.wanted = entry.value;
    check.actual = config.Get(entry.name);
    if (Satisfies(check.wanted, check.actual)) {
      check.state = OptionState::kSet;
    } else {
      check.state = check.actual ? OptionState::kDropped : OptionState::kMissing;
      check.reason = ExplainTrap(check, config);
      if (check.reason.empty()) check.reason = GenericReason(check);
    }
    report.checks.push_back(std::move(check));
  }
  return report;
}

void CheckRunningVersion(const KernelConfig& fragment, const KernelConfig& config,
                         std::string_view uname_version, VerifyReport& report) {
  if (fragment.Get("PREEMPT_RT") != "y" || !config.IsOn("PREEMPT_RT")) return;
  if (uname_version.find("PREEMPT_RT") != std::string_view::npos) return;
  report.problems.push_back(fmt::format(
      "the config says PREEMPT_RT but the running kernel's version '{}' does not: the config "
      "belongs to another build (read /proc/config.gz of the kernel that runs)",
      uname_version));
}

}  // namespace rtpulse::kernel
