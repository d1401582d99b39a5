// The inference backends on the models tools/gen-depth-model writes at build time: OpenCV DNN
// against an independent numpy forward pass of the same weights (depth_model_truth.py), the
// ONNX and TFLite files of one network against each other, and wrong models against their
// documented errors (docs/e2e.md, "Inference backends and the default model").
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "e2e/inference.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::e2e {
namespace {

// The stated tolerances (docs/e2e.md): float32 backends against each other and against a
// float64 reference; outputs are sigmoids in (0, 1).
constexpr double kMaxAbsDiff = 1e-4;
constexpr double kMaxRelDiff = 1e-3;

std::string ModelPath(const std::string& name) {
  return std::string(RTPULSE_MODELS_DIR) + "/" + name;
}

// A deterministic, image-like input in [0, 1].
Tensor PatternInput(const ModelShape& s) {
  Tensor t;
  t.shape = {1, s.in_channels, s.in_height, s.in_width};
  t.data.resize(t.ElementCount());
  for (size_t i = 0; i < t.data.size(); ++i) {
    const double x = static_cast<double>(i);
    t.data[i] = static_cast<float>(0.5 + 0.3 * std::sin(0.013 * x) + 0.2 * std::cos(0.0007 * x));
  }
  return t;
}

void WriteFloats(const std::string& path, const std::vector<float>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(float)));
  ASSERT_TRUE(out.good()) << path;
}

/// Independently of OpenCV: whether a libtbb is mapped into this process (/proc/self/maps)
/// once OpenCV is (the inference module brings it with the first backend).
bool OpenCvRunsOnTbb() {
  EXPECT_TRUE(MakeBackend(BackendKind::kOpenCv));
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/libtbb") != std::string::npos) return true;
  }
  return false;
}

std::unique_ptr<InferenceBackend> Loaded(BackendKind kind, const std::string& model) {
  auto backend = MakeBackend(kind);
  EXPECT_TRUE(backend) << backend.error().message;
  if (!backend) return nullptr;
  const Status s = (*backend)->Load(model, 2);
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(*backend) : nullptr;
}

// The backends are a module (src/e2e/backends.h): a program linked with rtpulse_e2e maps
// OpenCV and Arm NN only once it asks for a backend, and then maps the module.
TEST(InferenceModule, IsLoadedWithTheFirstBackendAndBringsOpenCv) {
  const auto mapped = [](const std::string& name) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (line.find(name) != std::string::npos) return true;
    }
    return false;
  };
  // The other tests of this program may have loaded it already; when not, nothing yet.
  if (!mapped("librtpulse_e2e_inference.so")) {
    EXPECT_FALSE(mapped("libopencv_dnn"));
  }
  auto backend = MakeBackend(BackendKind::kOpenCv);
  ASSERT_TRUE(backend) << backend.error().message;
  EXPECT_TRUE(mapped("librtpulse_e2e_inference.so"));
  EXPECT_TRUE(mapped("libopencv_dnn"));
  EXPECT_NE((*backend)->name().find("opencv"), std::string::npos) << (*backend)->name();
}

TEST(OpenCvBackend, DefaultModelMatchesAnIndependentNumpyForwardPass) {
  auto cv = Loaded(BackendKind::kOpenCv, ModelPath("depth-default.onnx"));
  ASSERT_TRUE(cv);
  const ModelShape& s = cv->shape();
  EXPECT_EQ(FormatShape({1, s.in_channels, s.in_height, s.in_width}), "1x3x256x256");
  EXPECT_EQ(FormatShape({1, s.out_channels, s.out_height, s.out_width}), "1x1x256x256");
  EXPECT_NE(cv->name().find("opencv-dnn"), std::string::npos);
  // On TBB (Debian's OpenCV: libtbb mapped into this process) the worker count is TBB's and
  // capped by it, so the backend does not claim the 2 asked; on its own pool it is 2.
  if (OpenCvRunsOnTbb()) {
    EXPECT_EQ(cv->threads(), -1);
    EXPECT_NE(cv->why().find("TBB"), std::string::npos) << cv->why();
  } else {
    EXPECT_EQ(cv->threads(), 2);
  }
  const Tensor in = PatternInput(s);
  Tensor out;
  ASSERT_TRUE(cv->Run(in, out));
  testutil::TempDir dir;
  WriteFloats(dir.File("in.f32"), in.data);
  WriteFloats(dir.File("out.f32"), out.data);
  const auto r = testutil::RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/e2e/depth_model_truth.py",
       ModelPath("depth-default.onnx"), dir.File("in.f32"), dir.File("out.f32")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::cout << "numpy reference: " << r.out;
  const auto truth = nlohmann::json::parse(r.out);
  EXPECT_LE(truth["max_abs"].get<double>(), kMaxAbsDiff) << r.out;
  EXPECT_LE(truth["max_rel"].get<double>(), kMaxRelDiff) << r.out;
  // A comparison that means something: the output is not a constant.
  EXPECT_GT(truth["ref_max"].get<double>() - truth["ref_min"].get<double>(), 0.05) << r.out;
  EXPECT_EQ(truth["shape"], nlohmann::json::array({1, 1, 256, 256}));
  // The FLOPs the file states are the ones its graph costs, and the docs state them too.
  const int64_t flops = truth["flops_stated"].get<int64_t>();
  EXPECT_EQ(truth["flops_graph"].get<int64_t>(), flops) << r.out;
  EXPECT_GT(flops, 900'000'000);
  EXPECT_LT(flops, 1'100'000'000);
  EXPECT_EQ(truth["label"], "latency-representative, not trained");
  const std::string docs = testutil::ReadFile(std::string(RTPULSE_SOURCE_DIR) + "/docs/e2e.md");
  EXPECT_NE(docs.find(std::to_string(flops)), std::string::npos)
      << "docs/e2e.md does not state the default model's " << flops << " FLOPs";
  // The .tflite file states the same count and the label in its description.
  const std::string tflite = testutil::ReadFile(ModelPath("depth-default.tflite"));
  EXPECT_NE(tflite.find("flops=" + std::to_string(flops) + " "), std::string::npos);
  EXPECT_NE(tflite.find("latency-representative, not trained"), std::string::npos);
}

TEST(DepthModelGenerator, SameArgumentsWriteTheSameBytesAndBadOnesAreUsageErrors) {
  testutil::TempDir dir;
  const std::string gen = std::string(RTPULSE_SOURCE_DIR) + "/tools/gen-depth-model";
  const auto r = testutil::RunProcess({"/usr/bin/python3", gen, "--out-dir", dir.path(), "--name",
                                       "depth-tiny", "--width", "0.25", "--size", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4740096 FLOPs per frame"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("latency-representative, not trained"), std::string::npos) << r.out;
  for (const char* ext : {".onnx", ".tflite"}) {
    EXPECT_EQ(testutil::ReadFile(dir.File(std::string("depth-tiny") + ext)),
              testutil::ReadFile(ModelPath(std::string("depth-tiny") + ext)))
        << ext << ": the seeded weights should make the same file";
  }
  const auto size = testutil::RunProcess(
      {"/usr/bin/python3", gen, "--out-dir", dir.path(), "--name", "bad", "--size", "100"});
  EXPECT_EQ(size.exit_code, 2);
  EXPECT_NE(size.err.find("--size 100"), std::string::npos) << size.err;
  const auto width = testutil::RunProcess(
      {"/usr/bin/python3", gen, "--out-dir", dir.path(), "--name", "bad", "--width", "0"});
  EXPECT_EQ(width.exit_code, 2);
  EXPECT_NE(width.err.find("--width 0"), std::string::npos) << width.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("bad.onnx")));
}

TEST(OpenCvBackend, TinyModelMatchesTheNumpyForwardPassAndCountsItsFlops) {
  auto cv = Loaded(BackendKind::kOpenCv, ModelPath("depth-tiny.onnx"));
  ASSERT_TRUE(cv);
  const Tensor in = PatternInput(cv->shape());
  Tensor out;
  ASSERT_TRUE(cv->Run(in, out));
  testutil::TempDir dir;
  WriteFloats(dir.File("in.f32"), in.data);
  WriteFloats(dir.File("out.f32"), out.data);
  const auto r = testutil::RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/e2e/depth_model_truth.py",
       ModelPath("depth-tiny.onnx"), dir.File("in.f32"), dir.File("out.f32")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto truth = nlohmann::json::parse(r.out);
  EXPECT_LE(truth["max_abs"].get<double>(), kMaxAbsDiff) << r.out;
  EXPECT_EQ(truth["flops_graph"], truth["flops_stated"]) << r.out;
  EXPECT_EQ(truth["shape"], nlohmann::json::array({1, 1, 64, 64}));
}

#if RTPULSE_HAVE_ARMNN_BACKEND
// Run in a child process pinned to 1 CPU by the test below (TBB starts once per process, and
// takes its worker cap from the CPUs it finds then): asks 4 threads and runs the tiny model.
TEST(OpenCvBackend, DISABLED_AsksFourThreadsOnOneCpu) {
  auto backend = MakeBackend(BackendKind::kOpenCv);
  ASSERT_TRUE(backend) << backend.error().message;
  const Status s = (*backend)->Load(ModelPath("depth-tiny.onnx"), 4);
  ASSERT_TRUE(s) << s.error().message;
  const Tensor in = PatternInput((*backend)->shape());
  Tensor out;
  ASSERT_TRUE((*backend)->Run(in, out));
}

TEST(OpenCvBackend, MoreThreadsThanCpusLeaveNoStrayTbbLineOnStderr) {
  if (!OpenCvRunsOnTbb()) GTEST_SKIP() << "this OpenCV does not run on TBB";
  const auto r = testutil::RunProcess(
      {"/usr/bin/taskset", "-c", "0", std::filesystem::read_symlink("/proc/self/exe").string(),
       "--gtest_filter=OpenCvBackend.DISABLED_AsksFourThreadsOnOneCpu",
       "--gtest_also_run_disabled_tests"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[  PASSED  ] 1 test"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("TBB"), std::string::npos) << "stderr: " << r.err;
}

TEST(ArmNnBackend, TfliteAndOnnxOfOneNetworkGiveTheSameOutput) {
  auto cv = Loaded(BackendKind::kOpenCv, ModelPath("depth-tiny.onnx"));
  auto arm = Loaded(BackendKind::kArmNn, ModelPath("depth-tiny.tflite"));
  ASSERT_TRUE(cv && arm);
  // Which device, and why, is said: CpuAcc only where its backend loads (arm64).
#if defined(__aarch64__)
  EXPECT_NE(arm->name().find("Cpu"), std::string::npos) << arm->name();
#else
  EXPECT_NE(arm->name().find("CpuRef"), std::string::npos) << arm->name();
  EXPECT_EQ(arm->threads(), 1);
  EXPECT_NE(arm->why().find("CpuAcc not available"), std::string::npos) << arm->why();
#endif
  const ModelShape& a = arm->shape();
  const ModelShape& c = cv->shape();
  EXPECT_EQ(FormatShape({a.in_channels, a.in_height, a.in_width, a.out_channels, a.out_height,
                         a.out_width}),
            FormatShape({c.in_channels, c.in_height, c.in_width, c.out_channels, c.out_height,
                         c.out_width}));
  const Tensor in = PatternInput(c);
  Tensor out_cv;
  Tensor out_arm;
  ASSERT_TRUE(cv->Run(in, out_cv));
  ASSERT_TRUE(arm->Run(in, out_arm));
  ASSERT_EQ(out_cv.shape, out_arm.shape);
  double max_abs = 0;
  double max_rel = 0;
  float lo = out_cv.data[0];
  float hi = lo;
  for (size_t i = 0; i < out_cv.data.size(); ++i) {
    const double d =
        std::fabs(static_cast<double>(out_cv.data[i]) - static_cast<double>(out_arm.data[i]));
    max_abs = std::max(max_abs, d);
    max_rel =
        std::max(max_rel, d / std::max(1e-12, std::fabs(static_cast<double>(out_cv.data[i]))));
    lo = std::min(lo, out_cv.data[i]);
    hi = std::max(hi, out_cv.data[i]);
  }
  std::cout << arm->name() << " vs " << cv->name() << ": max abs diff " << max_abs
            << ", max relative diff " << max_rel << ", output range [" << lo << ", " << hi << "]\n";
  EXPECT_LE(max_abs, kMaxAbsDiff);
  EXPECT_LE(max_rel, kMaxRelDiff);
  EXPECT_GT(hi - lo, 0.05F);  // not a constant map
  // Two frames in a row give the same output (no state kept between runs).
  Tensor again;
  ASSERT_TRUE(arm->Run(in, again));
  EXPECT_EQ(again.data, out_arm.data);
}
#endif

std::vector<BackendKind> CompiledBackends() {
  std::vector<BackendKind> kinds = {BackendKind::kOpenCv};
  if (BackendCompiledIn(BackendKind::kArmNn)) kinds.push_back(BackendKind::kArmNn);
  return kinds;
}

std::string Extension(BackendKind kind) {
  return kind == BackendKind::kOpenCv ? ".onnx" : ".tflite";
}

TEST(InferenceErrors, TruncatedModelIsAUsageErrorNamingTheFile) {
  testutil::TempDir dir;
  for (BackendKind kind : CompiledBackends()) {
    const std::string whole = testutil::ReadFile(ModelPath("depth-tiny" + Extension(kind)));
    const std::string cut = dir.File("cut" + Extension(kind));
    std::ofstream(cut, std::ios::binary)
        .write(whole.data(), static_cast<std::streamsize>(whole.size() / 3));
    auto backend = MakeBackend(kind);
    ASSERT_TRUE(backend);
    const Status s = (*backend)->Load(cut, 1);
    ASSERT_FALSE(s) << BackendKindName(kind);
    EXPECT_EQ(s.error().code, ExitCode::kUsage) << s.error().message;
    EXPECT_NE(s.error().message.find(cut), std::string::npos) << s.error().message;
  }
}

TEST(InferenceErrors, WrongInputShapeIsAUsageErrorNamingTheShape) {
  testutil::TempDir dir;
  const auto gen = testutil::RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tools/gen-depth-model", "--out-dir",
       dir.path(), "--name", "gray", "--width", "0.25", "--size", "32", "--input-channels", "1"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  for (BackendKind kind : CompiledBackends()) {
    auto backend = MakeBackend(kind);
    ASSERT_TRUE(backend);
    const Status s = (*backend)->Load(dir.File("gray" + Extension(kind)), 1);
    ASSERT_FALSE(s) << BackendKindName(kind);
    EXPECT_EQ(s.error().code, ExitCode::kUsage);
    EXPECT_NE(s.error().message.find("1x1x32x32"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("not an image"), std::string::npos) << s.error().message;
  }
}

// A model OpenCV cannot import (an operator it does not know): one line naming the node and
// its operator, no line breaks, neither real nor escaped.
TEST(InferenceErrors, AnUnknownOperatorIsOneReadableLineNamingIt) {
  if (!BackendCompiledIn(BackendKind::kOpenCv)) GTEST_SKIP() << "no OpenCV backend";
  testutil::TempDir dir;
  const std::string model = dir.File("mystery.onnx");
  const auto gen =
      testutil::RunProcess({"/usr/bin/python3", "-c",
                            "import sys, onnx\n"
                            "from onnx import helper as h, TensorProto as T\n"
                            "x = h.make_tensor_value_info('x', T.FLOAT, [1, 3, 32, 32])\n"
                            "y = h.make_tensor_value_info('y', T.FLOAT, [1, 1, 32, 32])\n"
                            "n = h.make_node('NoSuchOperator', ['x'], ['y'], name='mystery_node')\n"
                            "m = h.make_model(h.make_graph([n], 'g', [x], [y]), "
                            "opset_imports=[h.make_opsetid('', 13)])\n"
                            "onnx.save(m, sys.argv[1])\n",
                            model});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto backend = MakeBackend(BackendKind::kOpenCv);
  ASSERT_TRUE(backend);
  const Status s = (*backend)->Load(model, 1);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  const std::string& says = s.error().message;
  EXPECT_EQ(says.find('\n'), std::string::npos) << says;
  EXPECT_EQ(says.find("\\n"), std::string::npos) << says;
  EXPECT_NE(says.find("NoSuchOperator"), std::string::npos) << says;
  EXPECT_NE(says.find(model), std::string::npos) << says;
  EXPECT_EQ(says.find("OpenCV(4"), std::string::npos) << "the file:line prefix stays out: " << says;
}

TEST(InferenceErrors, MissingModelAndWrongInputTensorAreUsageErrors) {
  for (BackendKind kind : CompiledBackends()) {
    auto backend = MakeBackend(kind);
    ASSERT_TRUE(backend);
    const Status missing = (*backend)->Load("/nonexistent/m" + Extension(kind), 1);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ExitCode::kUsage);
    EXPECT_NE(missing.error().message.find("/nonexistent/m"), std::string::npos);
    ASSERT_TRUE((*backend)->Load(ModelPath("depth-tiny" + Extension(kind)), 1));
    Tensor wrong;
    wrong.shape = {1, 3, 32, 32};
    wrong.data.assign(wrong.ElementCount(), 0.0F);
    Tensor out;
    const Status run = (*backend)->Run(wrong, out);
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().message.find("1x3x64x64"), std::string::npos) << run.error().message;
  }
}

}  // namespace
}  // namespace rtpulse::e2e
