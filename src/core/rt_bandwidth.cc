#include "core/rt_bandwidth.h"

#include "core/parse.h"

namespace rtpulse {

std::optional<RtBandwidth> ReadRtBandwidth(const FsRoot& root) {
  const auto runtime_line = root.ReadLine("/proc/sys/kernel/sched_rt_runtime_us");
  const auto period_line = root.ReadLine("/proc/sys/kernel/sched_rt_period_us");
  if (!runtime_line || !period_line) return std::nullopt;
  const auto runtime = ParseSignedInt(*runtime_line, "sched_rt_runtime_us");
  const auto period = ParseSignedInt(*period_line, "sched_rt_period_us");
  if (!runtime || !period || *period <= 0) return std::nullopt;
  return RtBandwidth{*runtime, *period};
}

}  // namespace rtpulse
