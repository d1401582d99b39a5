#include "core/histogram.h"

#include <gtest/gtest.h>

namespace rtpulse {
namespace {

TEST(HistogramTest, EmptyHasZeroes) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(99), 0);
}

}  // namespace
}  // namespace rtpulse
