#pragma once

// tests/data/cyclictest-intervals/intervals.txt: the thread intervals the real cyclictest
// 2.40 set for each set of flags, recorded on 2 online CPUs (0-1) by its ./record script.

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace rtpulse::testutil {

struct IntervalRow {
  std::string flags;                  ///< cyclictest's flags, e.g. "-S -i1000 -h50".
  std::vector<std::string> args;      ///< The same, split at blanks.
  std::vector<int64_t> intervals_us;  ///< Thread 0, 1, ...; empty: cyclictest refused them.
  int line = 0;
};

inline std::string TrimBlanks(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Every row of the table; a malformed row is a test failure.
inline std::vector<IntervalRow> ReadIntervalTable() {
  std::ifstream in(std::string(RTPULSE_TEST_DATA) + "/cyclictest-intervals/intervals.txt");
  std::vector<IntervalRow> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const size_t bar = line.find('|');
    if (bar == std::string::npos) {
      ADD_FAILURE() << "intervals.txt line " << n << " has no '|': " << line;
      continue;
    }
    IntervalRow row;
    row.flags = TrimBlanks(line.substr(0, bar));
    row.line = n;
    std::istringstream words(row.flags);
    for (std::string w; words >> w;) row.args.push_back(w);
    const std::string right = TrimBlanks(line.substr(bar + 1));
    if (right.rfind("refused", 0) != 0) {
      std::istringstream values(right);
      for (int64_t us = 0; values >> us;) row.intervals_us.push_back(us);
      if (row.intervals_us.empty()) {
        ADD_FAILURE() << "intervals.txt line " << n << " has no interval: " << line;
      }
    }
    rows.push_back(row);
  }
  return rows;
}

/// True when `flags` holds `flag` ("-d"), alone or with its value attached ("-d0").
inline bool HasFlag(const IntervalRow& row, const std::string& flag) {
  for (const auto& w : row.args) {
    if (w == flag) return true;
    if (flag.size() == 2 && w.size() > 2 && w[1] != '-' && w.rfind(flag, 0) == 0) return true;
  }
  return false;
}

}  // namespace rtpulse::testutil
