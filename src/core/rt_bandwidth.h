#pragma once

#include <cstdint>
#include <optional>

#include "core/fs_root.h"

namespace rtpulse {

/// The kernel's real-time bandwidth (RT throttling): /proc/sys/kernel/sched_rt_runtime_us of
/// every sched_rt_period_us may go to SCHED_FIFO/RR tasks; the rest of each period is kept
/// for the others.
struct RtBandwidth {
  int64_t runtime_us = 0;  ///< -1: no limit.
  int64_t period_us = 0;
  /// Whether it stops real-time tasks at all: a runtime of 0 or more below the period.
  bool Throttles() const { return runtime_us >= 0 && runtime_us < period_us; }
};

/// Both files under `root`; nullopt when either cannot be read or parsed, or the period is not
/// above 0.
std::optional<RtBandwidth> ReadRtBandwidth(const FsRoot& root);

}  // namespace rtpulse
