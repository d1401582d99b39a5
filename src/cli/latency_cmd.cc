#include "cli/command.h"

namespace rtpulse::cli {

// Placeholder until the engine lands in the next commit.
Runner SetupLatency(CLI::App& /*sub*/) {
  return [] { return ReportError(Failure("latency: not built yet")); };
}

}  // namespace rtpulse::cli
