// Which kernel tracing facilities this machine has, and why not (`rtpulse check`, and the
// warnings of --explain and --wake timerlat). Reads tracefs through FsRoot so tests use
// fixture trees.
#pragma once

#include <string>
#include <vector>

#include "core/fs_root.h"

namespace rtpulse::trace {

struct Facility {
  std::string name;  ///< "permission", "tracefs", "instances", "trace_clock mono", "sched events",
                     ///< "irq events", "softirq events", "hrtimer events", "ipi events",
                     ///< "workqueue events", "syscall events", "timerlat tracer",
                     ///< "osnoise tracer", "timerlat user-space interface".
  bool present = false;
  std::string detail;  ///< Where it is, or why not and the fix (kernel option, mount, root).
};

/// Every facility of docs/trace.md#facilities, in that order. `tracefs_dir` "" = find it
/// (/proc/mounts, /sys/kernel/tracing, /sys/kernel/debug/tracing), a path inside `root`.
/// "permission" is this process's: root or CAP_SYS_ADMIN (tracefs is mode 0700).
std::vector<Facility> DetectFacilities(const FsRoot& root, const std::string& tracefs_dir = "");
/// The same with the privilege given (`rtpulse check` with RTPULSE_CHECK_PROCESS, tests).
std::vector<Facility> DetectFacilities(const FsRoot& root, const std::string& tracefs_dir,
                                       bool privileged);

}  // namespace rtpulse::trace
