#include "cli/command.h"

namespace rtpulse::cli {

// Placeholder until the samples reader lands.
Runner SetupSamples(CLI::App& /*sub*/) {
  return [] { return ReportError(Failure("samples: not built yet")); };
}

}  // namespace rtpulse::cli
