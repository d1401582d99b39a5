// Which CPUs are online, and where rtpulse's own non-real-time threads go (the housekeeping
// CPUs: every online CPU without a probe), one implementation for every module.
#pragma once

#include <vector>

#include "core/fs_root.h"

namespace rtpulse {

/// Online CPUs from `root`'s /sys/devices/system/cpu/online, falling back to sysconf().
std::vector<int> OnlineCpus(const FsRoot& root);

/// The CPUs of `online` that are not in `measured`, in order. Empty when every online CPU
/// is measured.
std::vector<int> HousekeepingCpus(const std::vector<int>& online, const std::vector<int>& measured);

/// Moves the calling thread to SCHED_OTHER and off the `measured` CPUs, onto this machine's
/// housekeeping CPUs (the real /sys, whatever RTPULSE_SYSROOT says: affinity is real). Best
/// effort: when every online CPU is measured, or a cpuset refuses, the affinity stays as it
/// was. Returns the CPUs the thread now runs on (empty: affinity unchanged). For the threads
/// that serve a measurement (the samples writer, the trace reader, the explainer's
/// analysis), never for a probe.
std::vector<int> LeaveMeasuredCpus(const std::vector<int>& measured);

}  // namespace rtpulse
