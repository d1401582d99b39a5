#include "load/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace rtpulse::load {
namespace {

TEST(LoadRegistry, HasEveryLoadOfTheIssueOnce) {
  std::set<std::string> names;
  for (const auto& d : Loads()) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    EXPECT_NE(std::string(d.stresses), "");
  }
  EXPECT_EQ(names, (std::set<std::string>{"cpu", "memory", "cache", "io", "switch", "net",
                                          "stress-ng", "cmd"}));
}

TEST(LoadRegistry, FindsByExactName) {
  auto d = FindLoad("memory");
  ASSERT_TRUE(d);
  EXPECT_STREQ((*d)->name, "memory");
}

TEST(LoadRegistry, SuggestsTheClosestName) {
  auto d = FindLoad("memroy");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ExitCode::kUsage);
  EXPECT_EQ(d.error().message, "unknown load 'memroy'. Did you mean 'memory'?");
  auto s = FindLoad("stress");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("Did you mean 'stress-ng'?"), std::string::npos);
}

TEST(LoadRegistry, ListsTheLoadsWhenNothingIsClose) {
  auto d = FindLoad("zzzzzzzzzz");
  ASSERT_FALSE(d);
  EXPECT_EQ(
      d.error().message,
      "unknown load 'zzzzzzzzzz' (loads: cpu, memory, cache, io, switch, net, stress-ng, cmd)");
}

}  // namespace
}  // namespace rtpulse::load
