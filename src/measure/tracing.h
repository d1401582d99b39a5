#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/fs_root.h"

namespace rtpulse::measure {

/// ftrace control for -b/--breaktrace: stop tracing the moment a latency exceeds the limit,
/// so the trace buffer ends at the spike (as cyclictest does).
class Tracer {
 public:
  Tracer() = default;
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// Finds tracefs (/sys/kernel/tracing, then /sys/kernel/debug/tracing) and opens
  /// tracing_on and trace_marker. Fails with exit code 3 when tracefs is not there.
  Status Open(const FsRoot& root);
  bool open() const { return tracing_on_fd_ >= 0; }
  const std::string& dir() const { return dir_; }

  /// Writes a marker (if asked) and stops tracing. Allocation-free: it runs in the probe.
  bool Break(int thread, int64_t latency_ns, int64_t limit_ns, bool mark);

 private:
  int tracing_on_fd_ = -1;
  int marker_fd_ = -1;
  std::string dir_;
};

}  // namespace rtpulse::measure
