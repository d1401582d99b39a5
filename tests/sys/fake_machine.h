#pragma once

// A machine made of files in a temporary folder (an FsRoot fixture built in the test), a
// CommandRunner that answers from a table, and a root process: what the check unit tests run
// against.

#include <cstdint>

#include "support/fake_commands.h"
#include "support/fake_tree.h"
#include "sys/process_facts.h"

namespace rtpulse::testutil {

inline sys::ProcessFacts RootProcess() {
  sys::ProcessFacts p;
  p.euid = 0;
  p.cap_effective = ~uint64_t{0};
  return p;
}

}  // namespace rtpulse::testutil
