// CPU isolation: boot parameters (isolcpus, nohz_full, rcu_nocbs, irqaffinity, kthread_cpus)
// against what the kernel reports, and device interrupts routed to isolated CPUs.

#include <fmt/format.h>

#include <algorithm>

#include "core/parse.h"
#include "sys/check_internal.h"

namespace rtpulse::sys::checks {
namespace {

constexpr const char* kNohzFullFile = "/sys/devices/system/cpu/nohz_full";

std::vector<int> Housekeeping(const CheckContext& c) {
  return CpusMinus(c.online, c.isolated);
}

bool KernelHasNohzFull(const CheckContext& c) {
  if (const auto& config = c.info.kernel_config) return config->config.IsOn("NO_HZ_FULL");
  return c.root.Exists(kNohzFullFile);
}

/// False only when the config is known and says RCU_NOCB_CPU is off.
bool KernelMayHaveNocb(const CheckContext& c) {
  const auto& config = c.info.kernel_config;
  return !config || config->config.IsOn("RCU_NOCB_CPU");
}

/// The usual isolation set for this machine: the upper half of the CPUs, CPU 0 side kept for
/// housekeeping. "" when there are fewer than two CPUs.
std::string SuggestIsolation(const CheckContext& c) {
  if (c.online.size() < 2) return "";
  const auto half = static_cast<std::ptrdiff_t>(c.online.size() / 2);
  const std::vector<int> iso(c.online.begin() + half, c.online.end());
  const std::vector<int> house(c.online.begin(), c.online.begin() + half);
  std::string params = fmt::format("isolcpus=domain,managed_irq,{}", FormatCpuList(iso));
  if (KernelHasNohzFull(c)) params += " nohz_full=" + FormatCpuList(iso);
  if (KernelMayHaveNocb(c)) params += " rcu_nocbs=" + FormatCpuList(iso);
  params += " irqaffinity=" + FormatCpuList(house);
  return fmt::format("{}; then run the real-time threads there (rtpulse latency -a {})",
                     c.BootParamFix(params), FormatCpuList(iso));
}

/// A boot parameter's CPU list, or an error naming it.
Expected<std::vector<int>> ParamCpus(const CheckContext& c, std::string_view key,
                                     const std::string& value) {
  auto cpus = ParseKernelCpuList(value, c.last_cpu);
  if (!cpus) return Failure(fmt::format("{}={}: {}", key, value, cpus.error().message));
  return cpus;
}

std::string HexMask(const std::vector<int>& cpus) {
  uint64_t mask = 0;
  for (int cpu : cpus) {
    if (cpu < 64) mask |= uint64_t{1} << cpu;
  }
  return fmt::format("{:x}", mask);
}

/// One numbered row of /proc/interrupts.
struct DeviceIrq {
  std::string irq;
  std::string name;
  std::vector<uint64_t> counts;
  bool per_cpu = false;
};

bool IsTriggerWord(const std::string& word) {
  for (const char* kind : {"edge", "Edge", "Level", "level", "fasteoi"}) {
    if (word.find(kind) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> SplitWords(std::string_view line) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < line.size()) {
    const size_t start = line.find_first_not_of(" \t", pos);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(" \t", start), line.size());
    words.emplace_back(line.substr(start, end - start));
    pos = end;
  }
  return words;
}

std::optional<DeviceIrq> ParseIrqLine(std::string_view line, size_t cpu_columns) {
  auto words = SplitWords(line);
  if (words.empty() || words[0].back() != ':') return std::nullopt;
  DeviceIrq irq;
  irq.irq = words[0].substr(0, words[0].size() - 1);
  if (irq.irq.empty() || !std::all_of(irq.irq.begin(), irq.irq.end(),
                                      [](char ch) { return ch >= '0' && ch <= '9'; })) {
    return std::nullopt;  // NMI, LOC, IPI0, Err: not device interrupts
  }
  size_t i = 1;
  for (; i < words.size() && irq.counts.size() < cpu_columns; ++i) {
    auto count = ParseInt(words[i], "count");
    if (!count) break;
    irq.counts.push_back(static_cast<uint64_t>(*count));
  }
  const std::vector<std::string> rest(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  // GIC private interrupts (SGI 0-15, PPI 16-31: arch_timer, PMU, vgic) belong to each CPU
  // and cannot move; only shared ones (SPI, 32+) are routable.
  if (rest.size() >= 2 && rest[0].rfind("GIC", 0) == 0) {
    auto hwirq = ParseInt(rest[1], "hwirq");
    irq.per_cpu = hwirq && *hwirq < 32;
  }
  auto trigger = std::find_if(rest.begin(), rest.end(), IsTriggerWord);
  if (trigger != rest.end()) {
    irq.name = Join(std::vector<std::string>(trigger + 1, rest.end()), " ");
  } else if (!rest.empty()) {
    irq.name = rest.back();
  }
  return irq;
}

std::vector<DeviceIrq> ParseInterrupts(const std::string& text) {
  std::vector<DeviceIrq> irqs;
  const size_t header_end = std::min(text.find('\n'), text.size());
  const size_t cpu_columns = SplitWords(std::string_view(text).substr(0, header_end)).size();
  size_t pos = header_end + 1;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    if (auto irq = ParseIrqLine(std::string_view(text).substr(pos, end - pos), cpu_columns)) {
      irqs.push_back(std::move(*irq));
    }
    pos = end + 1;
  }
  return irqs;
}

}  // namespace

CheckResult Isolcpus(const CheckContext& c) {
  constexpr const char* kWhy =
      "isolated CPUs are left out of scheduler load balancing, so no ordinary task is moved onto "
      "the CPU of the real-time thread, and housekeeping work stays on the other CPUs";
  const std::string sys = "/sys/devices/system/cpu/isolated: " + CpusText(c.isolated);
  const auto param = c.cmdline.Get("isolcpus");
  if (!param) {
    if (!c.isolated.empty()) {
      return Pass(sys + " (no isolcpus=: isolated at run time, e.g. by a cpuset partition)", kWhy);
    }
    if (c.online.size() < 2) return Info("one CPU: nothing to isolate", kWhy);
    return Info("no isolcpus= on the kernel command line; " + sys, kWhy, SuggestIsolation(c));
  }
  const std::string found = fmt::format("isolcpus={}; {}", *param, sys);
  auto parsed = ParseIsolcpus(*param, c.last_cpu);
  if (!parsed) {
    return Fail(found + "; " + parsed.error().message, kWhy,
                "fix the isolcpus= value (syntax: isolcpus=[domain,][managed_irq,][nohz,]LIST)");
  }
  const std::vector<int> expected = parsed->domain ? parsed->cpus : std::vector<int>{};
  if (const auto missing = CpusMinus(expected, c.isolated); !missing.empty()) {
    return Fail(fmt::format("{}; the kernel did not isolate {}", found, CpusText(missing)), kWhy,
                "check 'dmesg | grep -i -e isol -e housekeeping' (CPUs that do not exist, or a "
                "kernel without CONFIG_CPU_ISOLATION)");
  }
  if (!parsed->domain) {
    return Info(found +
                    "; without the 'domain' flag the scheduler still balances tasks onto "
                    "these CPUs",
                kWhy, c.BootParamFix("isolcpus=domain," + *param));
  }
  if (!c.online.empty() && Housekeeping(c).empty()) {
    return Warn(found + "; every online CPU is isolated, none is left for housekeeping", kWhy,
                c.BootParamFix("isolcpus=" + FormatCpuList(std::vector<int>(c.online.begin() + 1,
                                                                            c.online.end()))));
  }
  if (!parsed->unknown_flags.empty()) {
    return Warn(fmt::format("{}; flags this kernel does not know and skips: {}", found,
                            Join(parsed->unknown_flags, ", ")),
                kWhy, "drop the unknown flags from isolcpus=");
  }
  return Pass(found, kWhy);
}

CheckResult NohzFull(const CheckContext& c) {
  constexpr const char* kWhy =
      "a nohz_full CPU running a single task gets no periodic tick, so the real-time thread is "
      "not interrupted HZ times per second";
  const auto param = c.cmdline.Get("nohz_full");
  if (param) {
    if (auto cpus = ParamCpus(c, "nohz_full", *param); !cpus) {
      return Fail(cpus.error().message, kWhy, "fix the nohz_full= CPU list");
    }
  }
  const auto requested = c.RequestedNohzFull();
  const bool file = c.root.Exists(kNohzFullFile);
  const auto actual = ReadCpuListFile(c.root, kNohzFullFile);
  const std::string sys = file ? fmt::format("{}: {}", kNohzFullFile, CpusText(actual))
                               : fmt::format("no {}", kNohzFullFile);
  if (!requested.empty()) {
    const std::string found =
        fmt::format("{}; {}", param ? "nohz_full=" + *param : "isolcpus=nohz,...", sys);
    if (!file) {
      return Fail(found + ": the kernel has no NO_HZ_FULL and ignores the parameter", kWhy,
                  "rebuild with CONFIG_NO_HZ_FULL=y, or drop nohz_full= from the command line");
    }
    if (const auto missing = CpusMinus(requested, actual); !missing.empty()) {
      return Fail(fmt::format("{}; the kernel left {} ticking", found, CpusText(missing)), kWhy,
                  "check 'dmesg | grep -i nohz' (the boot CPU keeps timekeeping on some "
                  "architectures; CPUs must exist)");
    }
    if (const auto ticking = CpusMinus(c.isolated, actual); !ticking.empty()) {
      return Warn(fmt::format("{}; isolated CPUs {} keep their tick", found, CpusText(ticking)),
                  kWhy, c.BootParamFix("nohz_full=" + FormatCpuList(CpusUnion(actual, ticking))));
    }
    return Pass(found, kWhy);
  }
  if (c.isolated.empty()) return Info("no nohz_full=; " + sys, kWhy);
  if (!KernelHasNohzFull(c)) {
    return Info(fmt::format("isolated CPUs {} keep their tick: this kernel cannot stop it (see "
                            "kernel.nohz_full)",
                            CpusText(c.isolated)),
                kWhy);
  }
  return Warn(fmt::format("no nohz_full=: isolated CPUs {} keep their tick", CpusText(c.isolated)),
              kWhy, c.BootParamFix("nohz_full=" + FormatCpuList(c.isolated)));
}

CheckResult RcuNocbs(const CheckContext& c) {
  constexpr const char* kWhy =
      "RCU callbacks normally run on the CPU that queued them, in softirq context; offloaded "
      "(rcu_nocbs=, implied by nohz_full=) they run in rcuo kthreads on housekeeping CPUs";
  const auto param = c.cmdline.Get("rcu_nocbs");
  std::vector<int> offloaded;
  std::vector<std::string> parts;
  if (param) {
    parts.push_back("rcu_nocbs=" + *param);
    if (!param->empty()) {
      auto cpus = ParamCpus(c, "rcu_nocbs", *param);
      if (!cpus) return Fail(cpus.error().message, kWhy, "fix the rcu_nocbs= CPU list");
      offloaded = *cpus;
    }
    if (!KernelMayHaveNocb(c)) {
      return Fail(parts[0] + ", but the kernel has no CONFIG_RCU_NOCB_CPU and ignores it", kWhy,
                  "rebuild with CONFIG_RCU_NOCB_CPU=y");
    }
  } else {
    parts.emplace_back("no rcu_nocbs=");
  }
  // nohz_full CPUs are always offloaded; only the ones the kernel really made tickless count.
  const auto nohz = ReadCpuListFile(c.root, kNohzFullFile);
  if (!nohz.empty()) {
    parts.push_back("offloaded by nohz_full: " + FormatCpuList(nohz));
    offloaded = CpusUnion(offloaded, nohz);
  }
  if (const auto& config = c.info.kernel_config;
      config && config->config.IsOn("RCU_NOCB_CPU_DEFAULT_ALL")) {
    parts.emplace_back("CONFIG_RCU_NOCB_CPU_DEFAULT_ALL=y offloads every CPU");
    offloaded = c.online;
  }
  const std::string found = Join(parts, "; ");
  if (c.isolated.empty()) return Info(found + "; no isolated CPU", kWhy);
  if (const auto missing = CpusMinus(c.isolated, offloaded); !missing.empty()) {
    return Warn(
        fmt::format("{}; isolated CPUs {} run their own RCU callbacks", found, CpusText(missing)),
        kWhy, c.BootParamFix("rcu_nocbs=" + FormatCpuList(CpusUnion(offloaded, missing))));
  }
  return Pass(found, kWhy);
}

CheckResult IrqAffinityDefault(const CheckContext& c) {
  constexpr const char* kWhy =
      "interrupts requested after boot start with the default affinity; irqaffinity= keeps them "
      "on housekeeping CPUs from the first one";
  const auto param = c.cmdline.Get("irqaffinity");
  std::vector<std::string> parts = {param ? "irqaffinity=" + *param : "no irqaffinity="};
  std::vector<int> by_default;
  if (auto mask = c.root.ReadLine("/proc/irq/default_smp_affinity")) {
    if (auto cpus = ParseCpuMask(*mask)) {
      by_default = CpusIntersect(*cpus, c.online);
      parts.push_back(
          fmt::format("/proc/irq/default_smp_affinity: {} (CPUs {})", *mask, CpusText(by_default)));
    }
  }
  const std::string found = Join(parts, "; ");
  const auto house = Housekeeping(c);
  const std::string fix =
      c.BootParamFix("irqaffinity=" + CpusText(house)) +
      fmt::format("; at run time: echo {} > /proc/irq/default_smp_affinity", HexMask(house));
  std::vector<int> cpus = by_default;
  if (param) {
    auto parsed = ParamCpus(c, "irqaffinity", *param);
    if (!parsed) return Fail(parsed.error().message, kWhy, fix);
    cpus = *parsed;
  }
  if (c.isolated.empty()) return Info(found + "; no isolated CPU", kWhy);
  if (const auto overlap = CpusIntersect(cpus, c.isolated); !overlap.empty()) {
    const std::string what = fmt::format("{}; includes isolated CPUs {}", found, CpusText(overlap));
    return param ? Fail(what, kWhy, fix) : Warn(what, kWhy, fix);
  }
  return Pass(found, kWhy);
}

CheckResult KthreadCpus(const CheckContext& c) {
  constexpr const char* kWhy =
      "unbound kernel threads run wherever they are allowed; kthread_cpus= (or nohz_full=, "
      "which implies it) confines them to housekeeping CPUs";
  const auto param = c.cmdline.Get("kthread_cpus");
  const auto house = Housekeeping(c);
  if (param) {
    auto cpus = ParamCpus(c, "kthread_cpus", *param);
    if (!cpus) return Fail(cpus.error().message, kWhy, "fix the kthread_cpus= CPU list");
    const std::string found = "kthread_cpus=" + *param;
    if (const auto overlap = CpusIntersect(*cpus, c.isolated); !overlap.empty()) {
      return Fail(fmt::format("{}; includes isolated CPUs {}", found, CpusText(overlap)), kWhy,
                  c.BootParamFix("kthread_cpus=" + CpusText(house)));
    }
    return Pass(found, kWhy);
  }
  if (c.isolated.empty()) return Info("no kthread_cpus=; no isolated CPU", kWhy);
  const auto nohz = ReadCpuListFile(c.root, kNohzFullFile);
  if (CpusMinus(c.isolated, nohz).empty()) {
    return Pass(fmt::format("no kthread_cpus=; nohz_full= keeps unbound kthreads off {}",
                            CpusText(c.isolated)),
                kWhy);
  }
  return Info(fmt::format("no kthread_cpus=; isolated CPUs {} are not nohz_full, so only the "
                          "scheduler domains keep unbound kthreads away",
                          CpusText(CpusMinus(c.isolated, nohz))),
              kWhy, c.BootParamFix("kthread_cpus=" + CpusText(house)));
}

CheckResult DeviceIrqs(const CheckContext& c) {
  constexpr const char* kWhy =
      "an interrupt handled on the real-time thread's CPU preempts it for the handler (on "
      "PREEMPT_RT, the hard-irq part and the wake-up of the irq thread), adding its run time "
      "to the latency; isolated CPUs should receive none";
  constexpr size_t kListed = 8;
  const auto text = c.root.Read("/proc/interrupts");
  if (!text) return Info("unknown: /proc/interrupts unreadable", kWhy);
  std::vector<std::string> hits;
  std::vector<std::string> hit_irqs;
  size_t devices = 0;
  for (const auto& irq : ParseInterrupts(*text)) {
    if (irq.per_cpu) continue;
    ++devices;
    const std::string base = "/proc/irq/" + irq.irq + "/";
    auto affinity = ReadCpuListFile(c.root, base + "effective_affinity_list");
    if (affinity.empty()) affinity = ReadCpuListFile(c.root, base + "smp_affinity_list");
    const auto overlap = CpusIntersect(affinity, c.isolated);
    if (overlap.empty()) continue;
    hit_irqs.push_back(irq.irq);
    if (hits.size() < kListed) {
      hits.push_back(fmt::format("{} ({}) -> CPU {}", irq.irq, irq.name, CpusText(affinity)));
    }
  }
  if (c.isolated.empty()) {
    return Info(fmt::format("{} device IRQs; no isolated CPU to keep them off", devices), kWhy);
  }
  if (hit_irqs.empty()) {
    return Pass(fmt::format("{} device IRQs, none routed to isolated CPUs {}", devices,
                            CpusText(c.isolated)),
                kWhy);
  }
  std::string list = Join(hits, ", ");
  if (hit_irqs.size() > kListed) list += fmt::format(" and {} more", hit_irqs.size() - kListed);
  const std::string house = CpusText(Housekeeping(c));
  return Warn(
      fmt::format("{} of {} device IRQs routed to isolated CPUs {}: {}", hit_irqs.size(), devices,
                  CpusText(c.isolated), list),
      kWhy,
      fmt::format("for irq in {}; do echo {} > /proc/irq/$irq/smp_affinity_list; done (managed "
                  "IRQs refuse this: use isolcpus=managed_irq,...; if irqbalance runs, set "
                  "IRQBALANCE_BANNED_CPULIST={} in /etc/default/irqbalance)",
                  Join(hit_irqs, " "), house, CpusText(c.isolated)));
}

}  // namespace rtpulse::sys::checks
