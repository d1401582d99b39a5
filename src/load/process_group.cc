#include "load/process_group.h"

#include <dirent.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/fs_root.h"

namespace rtpulse::load {

std::vector<int> LiveGroupMembers(int pgid) {
  std::vector<int> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const auto stat = FsRoot::Live().Read(std::string("/proc/") + e->d_name + "/stat");
    if (!stat) continue;  // gone meanwhile
    const auto paren = stat->rfind(')');
    if (paren == std::string::npos || paren + 2 > stat->size()) continue;
    std::istringstream fields(stat->substr(paren + 2));
    std::string state;
    int ppid = 0;
    int pgrp = 0;
    fields >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != "Z" && state != "X") out.push_back(std::stoi(e->d_name));
  }
  closedir(dir);
  return out;
}

std::vector<int> AwaitGroupGone(int pgid, int64_t timeout_ns) {
  const int64_t deadline = MonotonicNs() + timeout_ns;
  for (;;) {
    std::vector<int> left = LiveGroupMembers(pgid);
    if (left.empty() || MonotonicNs() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace rtpulse::load
