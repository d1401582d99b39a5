#pragma once

// The plan tests' fixture (tests/suite/*_plan_test.cc): a machine made of files, a request,
// and the refusal a plan builder returns for it.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/fs_root.h"
#include "support/fake_tree.h"

namespace rtpulse::testutil {

/// `Request` is what the command was asked; `Build` turns it into Expected<Plan> on a machine.
template <typename Request, typename Plan, Expected<Plan> (*Build)(const Request&, const FsRoot&)>
class PlanTest : public ::testing::Test {
 protected:
  Expected<Plan> BuildPlan() { return Build(request_, tree_.Root()); }
  /// The refusal's message, or "" when the plan was built; the exit code is checked.
  std::string Refusal(ExitCode code = ExitCode::kUsage) {
    auto plan = BuildPlan();
    if (plan) return "";
    EXPECT_EQ(plan.error().code, code) << plan.error().message;
    return plan.error().message;
  }

  FakeTree tree_;
  Request request_;
};

}  // namespace rtpulse::testutil
