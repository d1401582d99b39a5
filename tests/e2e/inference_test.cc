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
