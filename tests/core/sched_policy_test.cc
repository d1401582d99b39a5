// The one scheduling-policy value (core/sched_policy.h) that measure, load and e2e set threads
// and processes with: names both ways, the Linux numbers against <sched.h>, and what the
// kernel reports back.
#include "core/sched_policy.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace rtpulse {
namespace {

TEST(SchedPolicyTest, EveryNameReadsBackAsItsPolicy) {
  for (const SchedPolicy p : kSchedPolicies) {
    const auto back = SchedPolicyFromName(SchedPolicyName(p));
    ASSERT_TRUE(back) << SchedPolicyName(p);
    EXPECT_EQ(*back, p);
  }
}

TEST(SchedPolicyTest, OnlyTheCanonicalNamesAreKnown) {
  // Aliases ("normal", cyclictest's) belong to the caller that takes them.
  for (const char* text : {"normal", "FIFO", "fifo ", "", "deadline", "sched_fifo"}) {
    EXPECT_FALSE(SchedPolicyFromName(text)) << text;
  }
}

TEST(SchedPolicyTest, LinuxNumbersAreSchedHs) {
  EXPECT_EQ(LinuxPolicy(SchedPolicy::kOther), SCHED_OTHER);
  EXPECT_EQ(LinuxPolicy(SchedPolicy::kBatch), SCHED_BATCH);
  EXPECT_EQ(LinuxPolicy(SchedPolicy::kIdle), SCHED_IDLE);
  EXPECT_EQ(LinuxPolicy(SchedPolicy::kFifo), SCHED_FIFO);
  EXPECT_EQ(LinuxPolicy(SchedPolicy::kRr), SCHED_RR);
}

TEST(SchedPolicyTest, OnlyFifoAndRrTakeAPriority) {
  for (const SchedPolicy p : kSchedPolicies) {
    EXPECT_EQ(IsRealtime(p), p == SchedPolicy::kFifo || p == SchedPolicy::kRr)
        << SchedPolicyName(p);
    // The kernel agrees: a priority range of 1..99 for those, 0..0 for the others.
    EXPECT_EQ(sched_get_priority_max(LinuxPolicy(p)), IsRealtime(p) ? 99 : 0);
  }
}

TEST(SchedPolicyTest, APolicySetOnAThreadIsReportedUnderItsOwnName) {
  // sched_getscheduler's number of a thread set with LinuxPolicy names the same policy.
  for (const SchedPolicy p : {SchedPolicy::kBatch, SchedPolicy::kIdle}) {
    std::thread([&] {
      sched_param param{};
      ASSERT_EQ(sched_setscheduler(0, LinuxPolicy(p), &param), 0);
      EXPECT_EQ(KernelPolicyName(sched_getscheduler(0)), SchedPolicyName(p));
    }).join();
  }
  EXPECT_EQ(KernelPolicyName(SCHED_OTHER), "other");
  EXPECT_EQ(KernelPolicyName(SCHED_FIFO), "fifo");
  EXPECT_EQ(KernelPolicyName(SCHED_RR), "rr");
  EXPECT_EQ(KernelPolicyName(6), "deadline");
  EXPECT_EQ(KernelPolicyName(42), "policy-42");
}

}  // namespace
}  // namespace rtpulse
