#include "load/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/parse.h"

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

/// Every row's default is a value its own check accepts: a default the parser would refuse
/// (out of range, not a choice) is a table error, found here rather than by a user.
TEST(LoadOptionTable, EveryDefaultPassesItsOwnRow) {
  using Kind = LoadOption::Kind;
  size_t rows = 0;
  for (const auto& d : Loads()) {
    std::set<std::string> keys;
    for (const auto& o : d.options) {
      SCOPED_TRACE(std::string(d.name) + ":" + o.key);
      ++rows;
      EXPECT_TRUE(keys.insert(o.key).second) << "key twice";
      EXPECT_NE(std::string(o.help), "");
      LoadParams given;
      if (o.machine_default != nullptr) {
        ASSERT_EQ(o.kind, Kind::kWhole);
        const int64_t v = o.machine_default();
        EXPECT_GE(v, o.min);
        EXPECT_LE(v, o.max);
        EXPECT_EQ(WholeOption(given, o), v);  // absent: the machine's value
        given.options.emplace_back(o.key, std::to_string(v));
      } else {
        given.options.emplace_back(o.key, o.fallback);
      }
      EXPECT_TRUE(CheckLoadOptions(d, given)) << CheckLoadOptions(d, given).error().message;
      const LoadParams absent;
      switch (o.kind) {
        case Kind::kWhole:
          if (o.machine_default == nullptr) {
            EXPECT_EQ(WholeOption(absent, o), ParseInt(o.fallback, o.key).value());
          }
          break;
        case Kind::kFlag:
          EXPECT_EQ(FlagOption(absent, o), std::string(o.fallback) == "1");
          break;
        case Kind::kTime:
          EXPECT_EQ(TimeOption(absent, o), ParseTimeNs(o.fallback).value());
          break;
        case Kind::kChoice:
        case Kind::kText:
          EXPECT_EQ(TextOption(absent, o), o.fallback);
          break;
      }
    }
  }
  EXPECT_EQ(rows, 11u);  // memory 1, cache 1, io 4, net 2, cmd 3
}

TEST(LoadOptionTable, EachKindRefusesWithTheKeyTheValueAndTheFix) {
  const LoadDescriptor& io = **FindLoad("io");
  const LoadDescriptor& net = **FindLoad("net");
  const LoadDescriptor& cmd = **FindLoad("cmd");
  const auto error = [](const LoadDescriptor& d, const std::string& key, const std::string& v) {
    LoadParams p;
    p.options.emplace_back(key, v);
    const Status s = CheckLoadOptions(d, p);
    EXPECT_FALSE(s) << key << "=" << v;
    if (!s) {
      EXPECT_EQ(s.error().code, ExitCode::kUsage);
    }
    return s ? std::string() : s.error().message;
  };
  EXPECT_EQ(error(io, "kb", "0"), "kb=0 is not valid; give a whole number from 1 to 65536");
  EXPECT_EQ(error(io, "kb", "4k"), "kb=4k is not valid; give a whole number from 1 to 65536");
  EXPECT_EQ(error(io, "fsync", "yes"), "fsync=yes is not valid; give fsync=1 or fsync=0");
  EXPECT_EQ(error(net, "proto", "sctp"), "proto=sctp is not known; give proto=udp or proto=tcp");
  EXPECT_EQ(error(cmd, "grace", "61s"),
            "grace=61s is not valid; give a time from 0s to 60s with its unit, e.g. grace=2s");
  EXPECT_EQ(error(cmd, "grace", "5"),
            "grace=5 is not valid; give a time from 0s to 60s with its unit, e.g. grace=2s");
  EXPECT_EQ(error(cmd, "shell", "2"), "shell=2 is not valid; give shell=1 or shell=0");
  // In range, and the value read back through the row.
  LoadParams p;
  p.options = {{"kb", "65536"}, {"fsync", "0"}, {"dir", "/var/tmp"}};
  EXPECT_TRUE(CheckLoadOptions(io, p));
  EXPECT_EQ(WholeOption(p, io.options[2]), 65536);
  EXPECT_FALSE(FlagOption(p, io.options[0]));
  EXPECT_EQ(TextOption(p, io.options[1]), "/var/tmp");
}

TEST(LoadOptionTable, DescriptionsGiveTheKeyAndItsValues) {
  const LoadDescriptor& io = **FindLoad("io");
  const LoadDescriptor& net = **FindLoad("net");
  const LoadDescriptor& cmd = **FindLoad("cmd");
  EXPECT_EQ(DescribeLoadOption(io.options[2]), "kb=1..65536");
  EXPECT_EQ(DescribeLoadOption(io.options[0]), "fsync=0|1");
  EXPECT_EQ(DescribeLoadOption(io.options[1]), "dir=PATH");
  EXPECT_EQ(DescribeLoadOption(net.options[0]), "proto=udp|tcp");
  EXPECT_EQ(DescribeLoadOption(cmd.options[1]), "grace=0s..60s");
  EXPECT_EQ(DescribeLoadOption((**FindLoad("memory")).options[0]), "mb=1..1048576");
}

}  // namespace
}  // namespace rtpulse::load
