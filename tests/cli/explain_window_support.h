// Helpers shared by the --explain CLI tests (explain_cli_test.cc, explain_suite_cli_test.cc)
// that read rtpulse's saved raw windows.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace rtpulse::testutil {

/// The pids of the raw_syscalls lines of a saved window ("comm-PID [cpu] ... sys_enter: ...").
inline std::vector<int> SyscallPids(const std::string& window) {
  std::vector<int> pids;
  std::istringstream lines(window);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.find(" sys_enter: ") == std::string::npos &&
        line.find(" sys_exit: ") == std::string::npos) {
      continue;
    }
    const size_t cpu = line.find(" [");
    const size_t dash = line.rfind('-', cpu);
    if (cpu == std::string::npos || dash == std::string::npos) {
      ADD_FAILURE() << "unreadable line: " << line;
      continue;
    }
    pids.push_back(std::stoi(line.substr(dash + 1, cpu - dash - 1)));
  }
  return pids;
}

}  // namespace rtpulse::testutil
