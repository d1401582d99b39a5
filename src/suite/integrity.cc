#include "suite/integrity.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

#include "core/fs_root.h"
#include "core/parse.h"
#include "core/printable.h"
#include "load/registry.h"

namespace rtpulse::suite {

std::optional<uint64_t> ParseOwnTicks(const std::string& stat_line) {
  // "pid (comm) state ppid ...": comm may hold blanks and ')', so fields count from the last
  // ')'; utime and stime are fields 14 and 15, the 12th and 13th after it.
  const size_t paren = stat_line.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat_line.substr(paren + 1));
  std::string field;
  for (int i = 0; i < 11; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  uint64_t utime = 0;
  uint64_t stime = 0;
  if (!(fields >> utime >> stime)) return std::nullopt;
  return utime + stime;
}

std::optional<ProcessTicks> ParseProcessTicks(const std::string& stat_line) {
  const size_t open = stat_line.find('(');
  const size_t close = stat_line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  auto ticks = ParseOwnTicks(stat_line);
  if (!ticks) return std::nullopt;
  return ProcessTicks{stat_line.substr(open + 1, close - open - 1), *ticks};
}

BusyReading ReadBusy(const FsRoot& fs) {
  BusyReading r;
  r.cpus = load::ParseProcStat(fs.Read("/proc/stat").value_or(""));
  if (auto line = fs.Read("/proc/self/stat")) {
    if (auto ticks = ParseOwnTicks(*line)) {
      r.own_ticks = *ticks;
      r.own_known = true;
    }
  }
  const std::string self = std::to_string(getpid());
  for (const std::string& name : fs.List("/proc")) {
    if (name.empty() || name == self ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    if (auto line = fs.Read("/proc/" + name + "/stat")) {
      if (auto p = ParseProcessTicks(*line)) r.processes[std::stoi(name)] = std::move(*p);
    }
  }
  return r;
}

std::vector<ProcessCpu> BusiestProcesses(const BusyReading& before, const BusyReading& after,
                                         size_t n) {
  std::vector<ProcessCpu> ran;
  for (const auto& [pid, now] : after.processes) {
    const auto then = before.processes.find(pid);
    const uint64_t earlier =
        then != before.processes.end() && then->second.ticks <= now.ticks ? then->second.ticks : 0;
    if (now.ticks > earlier) ran.push_back({pid, now.comm, now.ticks - earlier});
  }
  std::sort(ran.begin(), ran.end(), [](const ProcessCpu& a, const ProcessCpu& b) {
    return a.ticks != b.ticks ? a.ticks > b.ticks : a.pid < b.pid;
  });
  if (ran.size() > n) ran.resize(n);
  return ran;
}

ScenarioBusy BusyBetween(const BusyReading& before, const BusyReading& after,
                         const std::vector<int>& cpus) {
  ScenarioBusy b;
  b.cpus = cpus;
  for (const int cpu : cpus) {
    const auto x = before.cpus.find(cpu);
    const auto y = after.cpus.find(cpu);
    if (x == before.cpus.end() || y == after.cpus.end() || y->second.total < x->second.total) {
      continue;
    }
    const uint64_t total = y->second.total - x->second.total;
    const uint64_t idle = y->second.idle - x->second.idle;
    const uint64_t steal = y->second.steal - x->second.steal;
    b.ticks += total - std::min(total, steal);
    b.busy_ticks += total - std::min(total, idle + steal);
  }
  if (before.own_known && after.own_known && after.own_ticks >= before.own_ticks) {
    b.own_ticks = after.own_ticks - before.own_ticks;
  }
  if (b.ticks > 0) {
    const uint64_t other = b.busy_ticks - std::min(b.busy_ticks, b.own_ticks);
    b.other_percent = 100.0 * static_cast<double>(other) / static_cast<double>(b.ticks);
    b.other_cpus = b.other_percent / 100.0 * static_cast<double>(cpus.size());
  }
  return b;
}

Intent ScenarioIntent(const Scenario& scenario, const std::vector<int>& measured_cpus) {
  if (scenario.loads.empty()) return {0, measured_cpus};
  std::map<int, double> share;  // CPU -> intended busy share, at most 1
  for (const auto& spec : scenario.loads) {
    auto d = load::FindLoad(spec.name);
    if (!d || !(*d)->cpu_bound) continue;
    for (const int cpu : spec.params.cpus) {
      share[cpu] = std::min(1.0, share[cpu] + spec.params.intensity / 100.0);
    }
  }
  Intent intent{-1, {}};
  if (share.empty()) return intent;
  intent.busy_cpus = 0;
  for (const auto& [cpu, s] : share) {
    intent.busy_cpus += s;
    intent.cpus.push_back(cpu);
  }
  return intent;
}

namespace {

/// What ran meanwhile, for the idle warning: the busiest other processes (on any CPU: a
/// process's time is not split by CPU), also into `json` as "busiest_processes".
std::string NameTheBusiest(const BusyReading& before, const BusyReading& after,
                           nlohmann::json& check_json) {
  const std::vector<ProcessCpu> busiest = BusiestProcesses(before, after, 3);
  const double tick_s = 1.0 / static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
  check_json["busiest_processes"] = nlohmann::json::array();
  std::vector<std::string> named;
  for (const ProcessCpu& p : busiest) {
    const double seconds = static_cast<double>(p.ticks) * tick_s;
    check_json["busiest_processes"].push_back(
        {{"pid", p.pid}, {"comm", p.comm}, {"cpu_seconds", seconds}});
    named.push_back(fmt::format("{} (pid {}) {:.2f} s", Printable(p.comm), p.pid, seconds));
  }
  if (named.empty()) {
    return "no other process was seen using CPU time (the kernel's own work, or processes that "
           "ended in between)";
  }
  return fmt::format("the busiest other processes meanwhile (CPU time on any CPU): {}",
                     fmt::join(named, ", "));
}

}  // namespace

IntegrityCheck CheckIntegrity(const Scenario& scenario, const std::vector<int>& measured_cpus,
                              const BusyReading& before, const BusyReading& after) {
  IntegrityCheck check;
  const Intent intent = ScenarioIntent(scenario, measured_cpus);
  if (intent.busy_cpus < 0) {
    check.json = {{"intended_busy_cpus", nullptr},
                  {"note",
                   "no built-in CPU-bound load: what the loads should keep busy is not "
                   "known, so it is not checked"}};
    return check;
  }
  const ScenarioBusy b = BusyBetween(before, after, intent.cpus);
  const bool own_known = before.own_known && after.own_known;
  check.json = {{"cpus", FormatCpuList(b.cpus)},
                {"ticks", b.ticks},
                {"busy_ticks", b.busy_ticks},
                {"own_ticks", own_known ? nlohmann::json(b.own_ticks) : nlohmann::json(nullptr)},
                {"other_busy_percent", b.other_percent},
                {"other_busy_cpus", b.other_cpus},
                {"intended_busy_cpus", intent.busy_cpus}};
  if (b.ticks == 0) {
    check.json["note"] = "/proc/stat did not advance: the busy share is not known";
    return check;
  }
  const std::string own_note = own_known ? "" : " (rtpulse's own time not known: included)";
  if (scenario.loads.empty()) {
    check.json["threshold_percent"] = kIdleBusyThresholdPercent;
    if (b.other_percent > kIdleBusyThresholdPercent) {
      check.warnings.push_back(fmt::format(
          "scenario integrity: idle scenario was not idle: {:.0f}% CPU busy from other work on "
          "CPUs {}{} (threshold {:.0f}%); its latencies were measured under load; {}",
          b.other_percent, FormatCpuList(b.cpus), own_note, kIdleBusyThresholdPercent,
          NameTheBusiest(before, after, check.json)));
    }
    return check;
  }
  check.json["threshold_busy_cpus"] = kLoadedShareThreshold * intent.busy_cpus;
  if (b.other_cpus < kLoadedShareThreshold * intent.busy_cpus) {
    check.warnings.push_back(fmt::format(
        "scenario integrity: the loads did not load: CPUs {} were {:.2f} CPUs busy, the loads "
        "should keep {:.2f} busy (threshold {:.0f}% of that){}; the scenario ran lighter than "
        "its name says",
        FormatCpuList(b.cpus), b.other_cpus, intent.busy_cpus, 100 * kLoadedShareThreshold,
        own_note));
  }
  return check;
}

}  // namespace rtpulse::suite
