// The default model itself (not only its cheap variant) in both formats: the .tflite file the
// generator writes loads in Arm NN with the ONNX file's shape and gives the same map. Label
// `slow`: Arm NN's CpuRef backend runs the 1 GFLOP network in seconds on x86.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "e2e/inference.h"
#include "support/test_paths.h"

namespace rtpulse::e2e {
namespace {

TEST(DefaultModel, OnnxAndTfliteGiveTheSameMapWithinTheStatedTolerance) {
  const std::string dir = RTPULSE_MODELS_DIR;
  auto cv = MakeBackend(BackendKind::kOpenCv);
  auto arm = MakeBackend(BackendKind::kArmNn);
  ASSERT_TRUE(cv && arm);
  ASSERT_TRUE((*cv)->Load(dir + "/depth-default.onnx", 2));
  const Status loaded = (*arm)->Load(dir + "/depth-default.tflite", 2);
  ASSERT_TRUE(loaded) << loaded.error().message;
  const ModelShape& s = (*arm)->shape();
  EXPECT_EQ(FormatShape({1, s.in_channels, s.in_height, s.in_width}), "1x3x256x256");
  EXPECT_EQ(FormatShape({1, s.out_channels, s.out_height, s.out_width}), "1x1x256x256");
  Tensor in;
  in.shape = {1, 3, 256, 256};
  in.data.resize(in.ElementCount());
  for (size_t i = 0; i < in.data.size(); ++i) {
    in.data[i] = static_cast<float>((i * 2654435761U) % 1000U) / 1000.0F;  // noise-like, [0, 1)
  }
  Tensor a;
  Tensor b;
  ASSERT_TRUE((*cv)->Run(in, a));
  ASSERT_TRUE((*arm)->Run(in, b));
  ASSERT_EQ(a.shape, b.shape);
  double max_abs = 0;
  double max_rel = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a.data[i]) - static_cast<double>(b.data[i]));
    max_abs = std::max(max_abs, d);
    max_rel = std::max(max_rel, d / std::max(1e-12, std::fabs(static_cast<double>(a.data[i]))));
  }
  const auto [lo, hi] = std::minmax_element(a.data.begin(), a.data.end());
  std::cout << (*arm)->name() << " vs " << (*cv)->name() << ": max abs diff " << max_abs
            << ", max relative diff " << max_rel << "\n";
  EXPECT_LE(max_abs, 1e-4);  // docs/e2e.md's tolerances
  EXPECT_LE(max_rel, 1e-3);
  EXPECT_GT(*hi - *lo, 0.05F);
}

}  // namespace
}  // namespace rtpulse::e2e
