// Platform: virtualisation, steal time, the board, Raspberry Pi firmware throttling, tools.

#include <fmt/format.h>

#include <algorithm>

#include "core/parse.h"
#include "core/throttled.h"
#include "sys/check_internal.h"

namespace rtpulse::sys::checks {
namespace {

using std::chrono_literals::operator""s;

/// Steal above this share of CPU time since boot is worth a warning: every stolen slice is a
/// latency spike in the guest.
constexpr double kStealWarnPercent = 0.1;
constexpr auto kCommandTimeout = 3s;

std::string FirstLine(const std::string& text) {
  const size_t start = text.find_first_not_of("\n ");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

/// Steal ticks and total ticks of one "cpu" line of /proc/stat.
struct StealShare {
  std::string label;
  uint64_t steal = 0;
  uint64_t total = 0;
  double Percent() const {
    return total == 0 ? 0.0 : 100.0 * static_cast<double>(steal) / static_cast<double>(total);
  }
};

std::vector<StealShare> ParseStat(const std::string& text) {
  std::vector<StealShare> shares;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("cpu", 0) != 0) continue;
    StealShare share;
    std::vector<uint64_t> values;
    size_t p = line.find(' ');
    share.label = line.substr(0, p);
    while (p != std::string::npos) {
      const size_t start = line.find_first_not_of(' ', p);
      if (start == std::string::npos) break;
      p = line.find(' ', start);
      auto value = ParseInt(line.substr(start, p == std::string::npos ? p : p - start), "ticks");
      if (!value) break;
      values.push_back(static_cast<uint64_t>(*value));
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
    // counted in user, so the total is the first eight.
    if (values.size() < 8) continue;
    for (size_t i = 0; i < 8; ++i) share.total += values[i];
    share.steal = values[7];
    shares.push_back(share);
  }
  return shares;
}

std::string ThrottleFixes(const std::string& board, const std::vector<std::string>& conditions) {
  const bool pi5 = board.rfind("Raspberry Pi 5", 0) == 0;
  const bool pi4 = board.rfind("Raspberry Pi 4", 0) == 0;
  std::vector<std::string> fixes;
  const auto has = [&](std::string_view name) {
    return std::find(conditions.begin(), conditions.end(), name) != conditions.end();
  };
  if (has("under-voltage")) {
    fixes.emplace_back(pi5   ? "use the 27 W USB-C PD supply (5.1 V, 5 A) and a short cable"
                       : pi4 ? "use the 15.3 W USB-C supply (5.1 V, 3 A) and a short cable"
                             : "use a supply that holds 5 V under load, with a short cable");
  }
  if (has("ARM frequency capped") || has("throttled") || has("soft temperature limit")) {
    fixes.emplace_back(pi5 ? "improve cooling (the Active Cooler or a case fan) and watch "
                             "vcgencmd measure_temp under load"
                           : "improve cooling (a heatsink and fan) and watch vcgencmd "
                             "measure_temp under load");
  }
  return Join(fixes, "; ");
}

/// "PATH (first line of its version output)" for a tool found on PATH.
std::string DescribeTool(const CheckContext& c, const std::string& path,
                         const std::vector<std::string>& version_argv) {
  auto run = c.commands.Run(version_argv, kCommandTimeout);
  if (!run || run->timed_out) return path;
  std::string version = FirstLine(run->out);
  if (version.empty()) version = FirstLine(run->err);
  return version.empty() ? path : fmt::format("{} ({})", path, version);
}

}  // namespace

CheckResult Virtualization(const CheckContext& c) {
  constexpr const char* kWhy =
      "in a virtual machine the host schedules the vCPUs: its interrupts, other guests and vCPU "
      "preemption add delays (often milliseconds) that no guest setting removes, so results "
      "describe the host as much as this kernel";
  if (c.info.hypervisor.empty()) {
    return Pass("bare metal: no hypervisor in /sys/hypervisor, DMI or the CPU flags", kWhy);
  }
  return Warn("virtual machine: " + c.info.hypervisor, kWhy,
              "measure on bare metal for results about the hardware; in a VM, pin each vCPU to "
              "its own isolated host CPU and run the host with a PREEMPT_RT kernel");
}

CheckResult StealTime(const CheckContext& c) {
  const std::string why = fmt::format(
      "steal is time the hypervisor ran something else while this vCPU wanted to run: each "
      "stolen slice is a latency spike in the guest. This is the share since boot (warn from "
      "{}%); a busy host makes it worse during a run",
      kStealWarnPercent);
  const auto text = c.root.Read("/proc/stat");
  if (!text) return Info("unknown: /proc/stat unreadable", why);
  const auto shares = ParseStat(*text);
  if (shares.empty() || shares[0].label != "cpu") {
    return Info("unknown: no steal column in /proc/stat", why);
  }
  const StealShare& all = shares[0];
  std::string found = fmt::format("{:.2f}% of CPU time since boot ({} of {} ticks)", all.Percent(),
                                  all.steal, all.total);
  const StealShare* worst = nullptr;
  for (size_t i = 1; i < shares.size(); ++i) {
    if (worst == nullptr || shares[i].Percent() > worst->Percent()) worst = &shares[i];
  }
  if (worst != nullptr && worst->steal > 0) {
    found += fmt::format("; most on {}: {:.2f}%", worst->label, worst->Percent());
  }
  if (all.Percent() < kStealWarnPercent) return Pass(found, why);
  return Warn(found, why,
              "give the VM dedicated host CPUs (vCPU pinning, no overcommit), or measure on bare "
              "metal, where steal is always 0");
}

CheckResult Board(const CheckContext& c) {
  constexpr const char* kWhy =
      "the board decides which other checks apply (vcgencmd, cmdline.txt) and which results can "
      "be compared with each other";
  const std::string& model = c.info.board;
  if (model.empty()) {
    const auto product = c.root.ReadLine("/sys/class/dmi/id/product_name");
    if (product && !product->empty()) {
      return Info(fmt::format("no device-tree model; DMI product: {}", *product), kWhy);
    }
    return Info("no device-tree model and no DMI product name (a PC, server or VM)", kWhy);
  }
  if (model.rfind("Raspberry Pi 5", 0) == 0) {
    return Info(model + " (BCM2712, 4x Cortex-A76 up to 2.4 GHz)", kWhy);
  }
  if (model.rfind("Raspberry Pi 4", 0) == 0) return Info(model + " (BCM2711, 4x Cortex-A72)", kWhy);
  return Info(model, kWhy);
}

CheckResult FirmwareThrottling(const CheckContext& c) {
  constexpr const char* kWhy =
      "the Raspberry Pi firmware lowers the ARM clock on under-voltage or heat behind cpufreq's "
      "back: latencies measured meanwhile are not the board's normal ones, and under-voltage can "
      "corrupt data";
  if (c.commands.Find("vcgencmd").empty()) {
    if (!c.raspberry_pi) return Info("not a Raspberry Pi, and no vcgencmd on PATH", kWhy);
    return Warn("vcgencmd not found on PATH", kWhy,
                "apt install raspi-utils (older images: libraspberrypi-bin)");
  }
  auto run = c.commands.Run({"vcgencmd", "get_throttled"}, kCommandTimeout);
  if (!run || run->timed_out || run->exit_code != 0) {
    std::string what = !run             ? run.error().message
                       : run->timed_out ? "timed out"
                                        : FirstLine(run->err + "\n" + run->out);
    return Warn("vcgencmd get_throttled failed: " + what, kWhy,
                "run as root or as a user in the 'video' group (vcgencmd needs /dev/vcio)");
  }
  const auto flags = ParseGetThrottled(run->out);
  if (!flags) {
    return Warn(fmt::format("unexpected vcgencmd get_throttled output '{}'", FirstLine(run->out)),
                kWhy, "update the firmware and raspi-utils");
  }
  std::string found = fmt::format("throttled=0x{:x}", flags->raw);
  const auto now = flags->Now();
  const auto since = flags->SinceBoot();
  if (!now.empty()) found += "; now: " + Join(now, ", ");
  if (!since.empty()) found += "; since boot: " + Join(since, ", ");
  if (flags->UnknownBits() != 0)
    found += fmt::format("; unknown bits 0x{:x}", flags->UnknownBits());
  if (!now.empty()) {
    std::vector<std::string> all = now;
    all.insert(all.end(), since.begin(), since.end());
    return Fail(found, kWhy, ThrottleFixes(c.info.board, all));
  }
  if (!since.empty()) {
    return Warn(
        found, kWhy,
        ThrottleFixes(c.info.board, since) + " (the since-boot bits clear only at the next boot)");
  }
  return Pass(found + ": no under-voltage or throttling since boot", kWhy);
}

CheckResult StressNg(const CheckContext& c) {
  constexpr const char* kWhy =
      "rtpulse load scenarios use stress-ng for stressors the built-in loads lack; without it only "
      "the built-in loads run";
  const std::string path = c.commands.Find("stress-ng");
  if (path.empty()) return Warn("not found on PATH", kWhy, "apt install stress-ng");
  return Pass(DescribeTool(c, path, {"stress-ng", "--version"}), kWhy);
}

CheckResult Cyclictest(const CheckContext& c) {
  constexpr const char* kWhy =
      "cyclictest is the reference latency tool: running it beside rtpulse cross-checks the "
      "numbers";
  const std::string path = c.commands.Find("cyclictest");
  if (path.empty()) return Info("not found on PATH", kWhy, "apt install rt-tests");
  return Pass(DescribeTool(c, path, {"cyclictest", "--help"}), kWhy);
}

}  // namespace rtpulse::sys::checks
