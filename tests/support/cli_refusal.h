#pragma once

// The CLI tests' check of a refused command line: its exit code, nothing on standard output,
// and one line on standard error that names the bad value.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/subprocess.h"

namespace rtpulse::testutil {

inline void ExpectOneLineRefusal(const ProcessResult& r, const std::string& named, int code = 2) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
}

}  // namespace rtpulse::testutil
