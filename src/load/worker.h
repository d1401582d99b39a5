#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"
#include "load/load.h"

namespace rtpulse::load {

/// The work one worker process does, in short steps, so the duty cycle stays accurate.
class Work {
 public:
  virtual ~Work() = default;
  /// Allocates buffers, opens files and sockets, inside the worker (after placement).
  virtual Status Setup() = 0;
  /// Does a short piece of work (well under a millisecond) and adds what it did.
  virtual void Step(uint64_t& ops, uint64_t& bytes) = 0;
};

using WorkFactory = std::unique_ptr<Work> (*)(const LoadParams& params);

/// What a built-in load's workers count, for the report.
struct WorkerTraits {
  const char* ops_unit;  ///< "loops", "fsyncs", ...
  bool reports_bytes;    ///< Report MB/s.
  bool cpu_bound;        ///< Warn when a placed CPU was much less busy than the intensity.
};

/// A load run as one forked worker per CPU in `spec.params.cpus`, all in one new process
/// group: pinned, niced/policied, dying with the parent (PR_SET_PDEATHSIG), counting their
/// work in shared memory. Start and Stop from the same long-lived thread (PDEATHSIG fires
/// when the forking thread exits).
std::unique_ptr<Load> MakeWorkerLoad(const LoadSpec& spec, WorkFactory factory,
                                     WorkerTraits traits);

/// Places the calling process: CPU affinity (`cpus`; empty = leave), nice, policy. Used by
/// every backend's child.
Status PlaceProcess(const std::vector<int>& cpus, const LoadParams& params);

/// In a freshly forked child: die with the parent, join `pgid` (0: lead a new group) and
/// restore the signal mask and dispositions the parent changed. False if the parent is gone.
bool PrepareChild(int parent_pid, int pgid);

}  // namespace rtpulse::load
