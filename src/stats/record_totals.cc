#include "stats/record_totals.h"

#include <algorithm>

namespace rtpulse::stats {

void RecordGroup::Add(const SampleRecord& r) {
  const int64_t latency = LatencyNs(r);
  min_ns = count == 0 ? latency : std::min(min_ns, latency);
  max_ns = count == 0 ? latency : std::max(max_ns, latency);
  ++count;
  if ((r.flags & SampleRecord::kMissed) != 0) ++missed;
  cpu = r.cpu;
}

}  // namespace rtpulse::stats
