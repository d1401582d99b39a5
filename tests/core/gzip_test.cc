#include "core/gzip.h"

#include <gtest/gtest.h>

#include <string>

namespace rtpulse {
namespace {

TEST(GzipTest, RoundTrip) {
  for (const std::string& text : {std::string(), std::string("CONFIG_PREEMPT_RT=y\n"),
                                  std::string(200000, 'x'), std::string("a\0b", 3)}) {
    const auto gz = Gzip(text);
    ASSERT_TRUE(gz.has_value());
    EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f) << "gzip magic";
    EXPECT_EQ(static_cast<unsigned char>((*gz)[1]), 0x8b);
    const auto back = Gunzip(*gz, "test");
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(*back, text);
  }
}

TEST(GzipTest, ConcatenatedMembersAreOneStream) {
  const std::string both = *Gzip("CONFIG_A=y\n") + *Gzip("CONFIG_B=y\n");
  EXPECT_EQ(*Gunzip(both, "test"), "CONFIG_A=y\nCONFIG_B=y\n");
}

TEST(GzipTest, BadDataNamesTheFile) {
  for (const std::string& bad :
       {std::string("CONFIG_A=y\n"), std::string(), Gzip("CONFIG_A=y\n")->substr(0, 12)}) {
    const auto out = Gunzip(bad, "/proc/config.gz");
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().message.rfind("/proc/config.gz: not valid gzip data", 0), 0u)
        << out.error().message;
  }
}

}  // namespace
}  // namespace rtpulse
