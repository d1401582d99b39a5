// Bad load SPECs through the binary: one "rtpulse: error:" line, exit 2, nothing started.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "support/subprocess.h"

namespace rtpulse {
namespace {

using testutil::RunRtpulse;

void ExpectOneLineUsageError(const std::vector<std::string>& args, const std::string& needle) {
  const auto r = RunRtpulse(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("rtpulse: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("process group"), std::string::npos) << "a load started: " << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(LoadCli, UnknownLoadSuggestsTheClosest) {
  ExpectOneLineUsageError({"load", "memroy", "-D", "1"}, "Did you mean 'memory'?");
}

TEST(LoadCli, OfflineCpuIsRejected) {
  ExpectOneLineUsageError({"load", "cpu:cpus=4000", "-D", "1"}, "CPU 4000 is not online");
}

TEST(LoadCli, BadIntensityIsRejected) {
  ExpectOneLineUsageError({"load", "cpu:intensity=150", "-D", "1"}, "intensity=150");
}

TEST(LoadCli, ABadSecondSpecStopsTheFirstFromStarting) {
  ExpectOneLineUsageError({"load", "cpu:cpus=0", "net:proto=icmp", "-D", "1"}, "proto=icmp");
}

TEST(LoadCli, BadDurationIsRejected) {
  ExpectOneLineUsageError({"load", "cpu", "-D", "soon"}, "soon");
}

TEST(LoadCli, NoSpecIsRejected) {
  ExpectOneLineUsageError({"load"}, "no load given");
}

TEST(LoadCli, ListShowsEveryLoad) {
  const auto r = RunRtpulse({"load", "--list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"cpu", "memory", "cache", "io", "switch", "net", "stress-ng", "cmd"}) {
    EXPECT_NE(("\n" + r.out).find(std::string("\n") + name + " "), std::string::npos)
        << name << " missing from\n"
        << r.out;
  }
  // Each load's own options under it, from its option table: the key and its values, then
  // what it does and its default, on one line.
  for (const auto& [key, rest] : std::vector<std::pair<std::string, std::string>>{
           {"mb=1..1048576",
            "buffer streamed over, in MB (default 4x the last-level cache, at least 64)"},
           {"kb=1..65536", "size of each write, in KiB (default 4)"},
           {"proto=udp|tcp", "protocol over loopback (default udp)"},
           {"grace=0s..60s", "wait from SIGTERM to SIGKILL at the end (default 2s)"}}) {
    const size_t at = r.out.find("  " + key + " ");
    ASSERT_NE(at, std::string::npos) << key << " missing from\n" << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_TRUE(line.ends_with(" " + rest)) << line;
  }
}

}  // namespace
}  // namespace rtpulse
