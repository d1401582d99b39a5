// The inference module's parts every build has (the lean one too): names, model files, the
// ONNX signature reader, and the error of a backend this build lacks.
#include "e2e/inference.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "e2e/onnx_info.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::e2e {
namespace {

TEST(InferenceNames, BackendKindsParseAndUnknownOnesAreUsageErrors) {
  EXPECT_EQ(*ParseBackendKind("opencv"), BackendKind::kOpenCv);
  EXPECT_EQ(*ParseBackendKind("armnn"), BackendKind::kArmNn);
  const auto bad = ParseBackendKind("tensorrt");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::kUsage);
  EXPECT_NE(bad.error().message.find("tensorrt"), std::string::npos);
  EXPECT_NE(bad.error().message.find("opencv"), std::string::npos);
}

TEST(InferenceNames, ModelExtensionChoosesTheBackend) {
  EXPECT_EQ(*BackendForModel("/a/m.onnx"), BackendKind::kOpenCv);
  EXPECT_EQ(*BackendForModel("m.tflite"), BackendKind::kArmNn);
  const auto bad = BackendForModel("model.pb");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::kUsage);
  EXPECT_NE(bad.error().message.find("model.pb"), std::string::npos);
  EXPECT_FALSE(BackendForModel(".onnx"));
}

TEST(InferenceModelFile, MissingEmptyAndFolderAreUsageErrorsNamingThePath) {
  testutil::TempDir dir;
  const auto missing = CheckModelFile(dir.File("none.onnx"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);
  EXPECT_NE(missing.error().message.find("none.onnx"), std::string::npos);
  std::ofstream(dir.File("empty.onnx")).close();
  const auto empty = CheckModelFile(dir.File("empty.onnx"));
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);
  EXPECT_FALSE(CheckModelFile(dir.path()));
}

TEST(InferenceModelFile, DepthShapeCheckNamesTheWrongShape) {
  EXPECT_TRUE(CheckDepthShape("m.onnx", {3, 256, 256, 1, 256, 256}));
  const auto gray = CheckDepthShape("m.onnx", {1, 64, 64, 1, 64, 64});
  ASSERT_FALSE(gray);
  EXPECT_EQ(gray.error().code, ExitCode::kUsage);
  EXPECT_NE(gray.error().message.find("1x1x64x64"), std::string::npos);
  const auto many = CheckDepthShape("m.onnx", {3, 64, 64, 10, 64, 64});
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("1x10x64x64"), std::string::npos);
  EXPECT_NE(many.error().message.find("depth map"), std::string::npos);
}

/// A backend whose only use is ApplyRequestedInputSize (the base class's, as Load calls it).
class InputSizeBackend final : public InferenceBackend {
 public:
  Status Load(const std::string&, int) override { return Status::Ok(); }
  Status Run(const Tensor&, Tensor&) override { return Status::Ok(); }
  std::string name() const override { return "input-size"; }
  std::string why() const override { return ""; }
  int threads() const override { return 1; }
  const ModelShape& shape() const override { return shape_; }
  Status Apply(ModelShape& shape) const { return ApplyRequestedInputSize("m.onnx", shape); }

 private:
  ModelShape shape_;
};

// --input-size fills the symbolic sides; a fixed side must be the size asked, each side on its
// own (1x3x256x? takes a height of 256 only), and without it nothing changes.
TEST(InferenceModelFile, InputSizeFillsOnlySymbolicSides) {
  InputSizeBackend b;
  ModelShape none = {3, -1, -1, 1, -1, -1};
  ASSERT_TRUE(b.Apply(none));
  EXPECT_EQ(none.in_width, -1) << "no size asked: still symbolic";
  b.RequestInputSize(96, 64);
  ModelShape both = {3, -1, -1, 1, -1, -1};
  ASSERT_TRUE(b.Apply(both));
  EXPECT_EQ(both.in_width, 96);
  EXPECT_EQ(both.in_height, 64);
  ModelShape height_fixed = {3, 64, -1, 1, -1, -1};
  ASSERT_TRUE(b.Apply(height_fixed));
  EXPECT_EQ(height_fixed.in_width, 96);
  ModelShape height_other = {3, 256, -1, 1, -1, -1};
  const Status refused = b.Apply(height_other);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::kUsage);
  EXPECT_NE(refused.error().message.find("--input-size 96x64: model m.onnx fixes its input at "
                                         "?x256 (width x height, ? symbolic)"),
            std::string::npos)
      << refused.error().message;
  ModelShape fixed = {3, 64, 96, 1, 64, 96};
  EXPECT_TRUE(b.Apply(fixed)) << "the same size as the model's own";
}

TEST(InferenceModelFile, SymbolicInputSizeAndZeroThreadsAreUsageErrors) {
  const auto symbolic = CheckDepthShape("m.onnx", {3, -1, -1, 1, -1, -1});
  ASSERT_FALSE(symbolic);
  EXPECT_NE(symbolic.error().message.find("1x3x?x?"), std::string::npos);
  EXPECT_NE(symbolic.error().message.find("fixed input size"), std::string::npos);
  EXPECT_TRUE(CheckThreads(1));
  const auto zero = CheckThreads(0);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, ExitCode::kUsage);
  EXPECT_NE(zero.error().message.find("--threads 0"), std::string::npos);
}

TEST(InferenceBuild, AMissingBackendIsAResourceErrorNamingThePackages) {
  for (BackendKind kind : {BackendKind::kOpenCv, BackendKind::kArmNn}) {
    auto backend = MakeBackend(kind);
    if (BackendCompiledIn(kind)) {
      EXPECT_TRUE(backend);
      continue;
    }
    ASSERT_FALSE(backend);
    EXPECT_EQ(backend.error().code, ExitCode::kResource);
    EXPECT_NE(backend.error().message.find("RTPULSE_INFERENCE"), std::string::npos);
  }
}

#if RTPULSE_HAVE_MODELS
TEST(OnnxSignature, ReadsTheGeneratedModelsDeclaredShapes) {
  const auto sig = ReadOnnxSignature(std::string(RTPULSE_MODELS_DIR) + "/depth-default.onnx");
  ASSERT_TRUE(sig) << sig.error().message;
  ASSERT_EQ(sig->inputs.size(), 1U);  // the weights (initializers) are not inputs
  EXPECT_EQ(sig->inputs[0], (std::vector<int64_t>{1, 3, 256, 256}));
  ASSERT_EQ(sig->outputs.size(), 1U);
  EXPECT_EQ(sig->outputs[0], (std::vector<int64_t>{1, 1, 256, 256}));
}

TEST(OnnxSignature, TruncatedAndForeignFilesAreUsageErrors) {
  testutil::TempDir dir;
  const std::string whole =
      testutil::ReadFile(std::string(RTPULSE_MODELS_DIR) + "/depth-tiny.onnx");
  for (size_t keep : {whole.size() / 2, size_t{40}, whole.size() - 1}) {
    std::ofstream(dir.File("cut.onnx"), std::ios::binary)
        .write(whole.data(), static_cast<std::streamsize>(keep));
    const auto sig = ReadOnnxSignature(dir.File("cut.onnx"));
    ASSERT_FALSE(sig) << keep;
    EXPECT_EQ(sig.error().code, ExitCode::kUsage);
    EXPECT_NE(sig.error().message.find("not a valid ONNX model"), std::string::npos);
  }
  std::ofstream(dir.File("text.onnx")) << "this is not a model\n";
  EXPECT_FALSE(ReadOnnxSignature(dir.File("text.onnx")));
}
#endif

}  // namespace
}  // namespace rtpulse::e2e
