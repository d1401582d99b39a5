#pragma once

#include <string>
#include <string_view>

#include "core/error.h"
#include "core/fs_root.h"
#include "core/kernel_config.h"

namespace rtpulse::kernel {

/// The configuration of the kernel that runs, and where it was found.
struct RunningConfig {
  KernelConfig config;
  std::string source;   ///< "/proc/config.gz" or "/boot/config-<release>".
  std::string release;  ///< uname -r.
  std::string version;  ///< uname -v ("#1 SMP PREEMPT_RT ...").
};

/// Reads the running kernel's config through `root` with LoadKernelConfig in strict mode:
/// /proc/config.gz first (it is the kernel's own, CONFIG_IKCONFIG_PROC), then
/// /boot/config-<release>; a corrupt /proc/config.gz or a line it cannot read is an error. A
/// missing config is a resource error (exit 3) that says how to get one.
Expected<RunningConfig> LoadRunningConfig(const FsRoot& root);

/// The fragment compiled into rtpulse (kernel/rt.config of the source tree it was built from).
std::string_view DefaultFragment();

}  // namespace rtpulse::kernel
