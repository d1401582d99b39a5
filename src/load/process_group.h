#pragma once

#include <cstdint>
#include <vector>

namespace rtpulse::load {

/// The live (not zombie) processes whose process group is `pgid`, from /proc/*/stat.
std::vector<int> LiveGroupMembers(int pgid);

/// Waits until process group `pgid` has no live member or `timeout_ns` has passed; the
/// members still alive then (empty when the group is gone).
std::vector<int> AwaitGroupGone(int pgid, int64_t timeout_ns);

}  // namespace rtpulse::load
