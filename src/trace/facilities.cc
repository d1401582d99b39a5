#include "trace/facilities.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string_view>

namespace rtpulse::trace {

namespace {

constexpr int kCapSysAdminBit = 21;

/// The effective capabilities of this process (the real /proc, not a fixture: they are a
/// fact of the process that reads, not of the machine that is read).
bool FacilitiesProcessPrivileged() {
  if (geteuid() == 0) return true;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    std::istringstream value(line.substr(7));
    uint64_t caps = 0;
    value >> std::hex >> caps;
    return ((caps >> kCapSysAdminBit) & 1U) != 0;
  }
  return false;
}

bool FacilitiesHasWord(const std::string& text, std::string_view word) {
  std::istringstream words(text);
  std::string w;
  while (words >> w) {
    if (w == word || w == "[" + std::string(word) + "]") return true;
  }
  return false;
}

/// The tracefs mount point from /proc/mounts, "" when none is listed.
std::string FacilitiesMountedTracefs(const FsRoot& root) {
  const auto mounts = root.Read("/proc/mounts");
  if (!mounts) return {};
  std::istringstream lines(*mounts);
  std::string line;
  std::string debugfs;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string device, point, type;
    fields >> device >> point >> type;
    if (type == "tracefs") return point;
    if (type == "debugfs" && debugfs.empty()) debugfs = point + "/tracing";
  }
  return debugfs;
}

struct FacilitiesEventGroup {
  const char* facility;
  const char* system;
  std::vector<const char*> events;
  const char* fix;
  bool any = false;  ///< Present when one of the events exists (ipi's names vary by arch).
};

std::vector<FacilitiesEventGroup> FacilityEventGroups() {
  return {
      {"sched events",
       "sched",
       {"sched_switch", "sched_waking", "sched_wakeup"},
       "a kernel with CONFIG_FTRACE and CONFIG_TRACEPOINTS"},
      {"irq events",
       "irq",
       {"irq_handler_entry", "irq_handler_exit"},
       "a kernel with CONFIG_FTRACE and CONFIG_TRACEPOINTS"},
      {"softirq events",
       "irq",
       {"softirq_raise", "softirq_entry", "softirq_exit"},
       "a kernel with CONFIG_FTRACE and CONFIG_TRACEPOINTS"},
      {"hrtimer events",
       "timer",
       {"hrtimer_start", "hrtimer_expire_entry", "hrtimer_expire_exit"},
       "a kernel with CONFIG_FTRACE and CONFIG_TRACEPOINTS"},
      {"ipi events",
       "ipi",
       {"ipi_raise", "ipi_entry", "ipi_send_cpu", "ipi_send_cpumask"},
       "Linux 3.17 or newer (arm64: ipi_raise; x86: ipi_send_cpu, 6.6+)",
       true},
      {"workqueue events",
       "workqueue",
       {"workqueue_execute_start", "workqueue_execute_end"},
       "a kernel with CONFIG_FTRACE and CONFIG_TRACEPOINTS"},
      {"syscall events",
       "raw_syscalls",
       {"sys_enter", "sys_exit"},
       "a kernel with CONFIG_FTRACE_SYSCALLS"},
  };
}

Facility FacilitiesEventFacility(const FsRoot& root, const std::string& dir,
                                 const FacilitiesEventGroup& group) {
  Facility f;
  f.name = group.facility;
  std::vector<std::string> present;
  std::vector<std::string> missing;
  for (const char* event : group.events) {
    const std::string id = std::string(group.system) + ":" + event;
    if (root.Exists(fmt::format("{}/events/{}/{}/format", dir, group.system, event))) {
      present.push_back(id);
    } else {
      missing.push_back(id);
    }
  }
  f.present = group.any ? !present.empty() : missing.empty();
  if (f.present) {
    f.detail = fmt::format("{}", fmt::join(present, ", "));
  } else {
    f.detail = fmt::format("missing {} (fix: {})", fmt::join(missing, ", "), group.fix);
  }
  return f;
}

std::vector<Facility> FacilitiesWithoutTracefs(const std::string& why) {
  std::vector<Facility> out;
  for (const char* name : {"instances", "trace_clock mono"}) out.push_back({name, false, why});
  for (const FacilitiesEventGroup& group : FacilityEventGroups())
    out.push_back({group.facility, false, why});
  for (const char* name : {"timerlat tracer", "osnoise tracer", "timerlat user-space interface"}) {
    out.push_back({name, false, why});
  }
  return out;
}

}  // namespace

std::vector<Facility> DetectFacilities(const FsRoot& root, const std::string& tracefs_dir) {
  return DetectFacilities(root, tracefs_dir, FacilitiesProcessPrivileged());
}

std::vector<Facility> DetectFacilities(const FsRoot& root, const std::string& tracefs_dir,
                                       bool privileged) {
  std::vector<Facility> out;
  out.push_back({"permission", privileged,
                 privileged ? "root or CAP_SYS_ADMIN"
                            : "not root and no CAP_SYS_ADMIN: tracefs is only open to root (fix: "
                              "run rtpulse as root, e.g. with sudo)"});

  std::string dir = tracefs_dir;
  const std::string mounted = FacilitiesMountedTracefs(root);
  if (dir.empty()) {
    for (const std::string& candidate :
         {mounted, std::string("/sys/kernel/tracing"), std::string("/sys/kernel/debug/tracing")}) {
      if (!candidate.empty() && root.Exists(candidate + "/tracing_on")) {
        dir = candidate;
        break;
      }
    }
  }
  Facility tracefs{"tracefs", false, ""};
  if (!dir.empty() && root.Exists(dir + "/tracing_on")) {
    tracefs.present = true;
    tracefs.detail = "mounted at " + dir;
  } else if (!privileged && !mounted.empty()) {
    // Listed in /proc/mounts but not readable: 0700 root.
    tracefs.present = true;
    tracefs.detail = fmt::format("mounted at {}, readable by root only", mounted);
    out.push_back(tracefs);
    const auto rest = FacilitiesWithoutTracefs(
        "cannot tell without root: tracefs is only open to root (fix: run rtpulse check as root)");
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  } else {
    const auto filesystems = root.Read("/proc/filesystems");
    if (filesystems && filesystems->find("tracefs") == std::string::npos &&
        filesystems->find("debugfs") == std::string::npos) {
      tracefs.detail = "the kernel has no tracefs (built without CONFIG_FTRACE)";
    } else {
      tracefs.detail =
          fmt::format("not mounted{} (fix: mount -t tracefs nodev /sys/kernel/tracing, as root)",
                      tracefs_dir.empty() ? std::string() : " at " + tracefs_dir);
    }
    out.push_back(tracefs);
    const auto rest = FacilitiesWithoutTracefs("needs tracefs");
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }
  out.push_back(tracefs);

  Facility instances{"instances", false, ""};
  const std::string instances_dir = dir + "/instances";
  if (!root.Exists(instances_dir)) {
    instances.detail = "no instances/ folder in " + dir + " (fix: Linux 3.10 or newer)";
  } else if (!privileged || access(root.Path(instances_dir).c_str(), W_OK) != 0) {
    instances.detail = instances_dir +
                       " is not writable: rtpulse cannot create its own instance (fix: run as "
                       "root)";
  } else {
    instances.present = true;
    instances.detail = instances_dir + " writable (each run traces in its own rtpulse-PID)";
  }
  out.push_back(instances);

  Facility mono{"trace_clock mono", false, ""};
  const std::string clocks = root.ReadLine(dir + "/trace_clock").value_or("");
  mono.present = FacilitiesHasWord(clocks, "mono");
  mono.detail = mono.present ? "trace_clock offers mono (the probes' CLOCK_MONOTONIC)"
                : clocks.empty()
                    ? "cannot read " + dir + "/trace_clock"
                    : fmt::format(
                          "no mono clock in trace_clock ({}): trace windows cannot line "
                          "up with the probes (fix: Linux 4.0 or newer)",
                          clocks);
  out.push_back(mono);

  for (const FacilitiesEventGroup& group : FacilityEventGroups())
    out.push_back(FacilitiesEventFacility(root, dir, group));

  const std::string tracers = root.ReadLine(dir + "/available_tracers").value_or("");
  Facility timerlat{"timerlat tracer", FacilitiesHasWord(tracers, "timerlat"), ""};
  timerlat.detail = timerlat.present
                        ? "in available_tracers"
                        : "kernel built without CONFIG_TIMERLAT_TRACER (available_tracers: " +
                              (tracers.empty() ? std::string("none") : tracers) + ")";
  out.push_back(timerlat);
  Facility osnoise{"osnoise tracer", FacilitiesHasWord(tracers, "osnoise"), ""};
  osnoise.detail =
      osnoise.present ? "in available_tracers" : "kernel built without CONFIG_OSNOISE_TRACER";
  out.push_back(osnoise);

  Facility user{"timerlat user-space interface", false, ""};
  const std::string fd_path = dir + "/osnoise/per_cpu/cpu0/timerlat_fd";
  user.present = root.Exists(fd_path);
  if (user.present) {
    user.detail = dir + "/osnoise/per_cpu/cpuN/timerlat_fd (one thread per CPU)";
  } else if (!timerlat.present) {
    user.detail = "needs the timerlat tracer (CONFIG_TIMERLAT_TRACER)";
  } else {
    user.detail = "no " + fd_path + ": the kernel is older than Linux 6.6 (fix: a newer kernel)";
  }
  out.push_back(user);
  return out;
}

}  // namespace rtpulse::trace
