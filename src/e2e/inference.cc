#include "e2e/inference.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <numeric>

#include "core/printable.h"

namespace rtpulse::e2e {

size_t Tensor::ElementCount() const {
  if (shape.empty()) return 0;
  return std::accumulate(shape.begin(), shape.end(), size_t{1},
                         [](size_t a, int b) { return a * static_cast<size_t>(b); });
}

Expected<BackendKind> ParseBackendKind(std::string_view text) {
  if (text == "opencv") return BackendKind::kOpenCv;
  if (text == "armnn") return BackendKind::kArmNn;
  return UsageError(
      fmt::format("--backend {}: unknown backend; use opencv (ONNX models) or "
                  "armnn (TFLite models)",
                  Printable(text)));
}

std::string_view BackendKindName(BackendKind kind) {
  return kind == BackendKind::kOpenCv ? "opencv" : "armnn";
}

Expected<BackendKind> BackendForModel(const std::string& model_path) {
  const auto ends_with = [&](std::string_view ext) {
    return model_path.size() > ext.size() &&
           model_path.compare(model_path.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (ends_with(".onnx")) return BackendKind::kOpenCv;
  if (ends_with(".tflite")) return BackendKind::kArmNn;
  return UsageError(fmt::format(
      "model {}: unknown model format; give a .onnx file (OpenCV DNN) or a .tflite file "
      "(Arm NN)",
      Printable(model_path)));
}

bool BackendCompiledIn(BackendKind kind) {
  return kind == BackendKind::kOpenCv ? RTPULSE_HAVE_OPENCV != 0 : RTPULSE_HAVE_ARMNN != 0;
}

Status CheckModelFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return UsageError(fmt::format("model {}: {}; give the path of an existing model file",
                                  Printable(path), std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return UsageError(
        fmt::format("model {}: not a regular file; give a .onnx or .tflite file", Printable(path)));
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return UsageError(fmt::format("model {}: cannot be read ({}); make it readable",
                                  Printable(path), std::strerror(errno)));
  }
  if (st.st_size == 0) {
    return UsageError(
        fmt::format("model {}: the file is empty; write the model again", Printable(path)));
  }
  return Status::Ok();
}

std::string FormatShape(const std::vector<int>& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += 'x';
    text += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return text.empty() ? std::string("(none)") : text;
}

Status CheckThreads(int threads) {
  if (threads < 1) {
    return UsageError(fmt::format(
        "--threads {}: an inference needs at least one thread; use 1 or more", threads));
  }
  return Status::Ok();
}

Status InferenceBackend::ApplyRequestedInputSize(const std::string& model_path,
                                                 ModelShape& shape) const {
  if (requested_width_ <= 0 || requested_height_ <= 0) return Status::Ok();
  // Each side on its own: a fixed one must be the size asked (1x3x256x? takes 256 high only).
  if ((shape.in_height >= 0 && shape.in_height != requested_height_) ||
      (shape.in_width >= 0 && shape.in_width != requested_width_)) {
    const auto side = [](int v) { return v < 0 ? std::string("?") : std::to_string(v); };
    return UsageError(fmt::format(
        "--input-size {}x{}: model {} fixes its input at {}x{} (width x height, ? symbolic); "
        "give the fixed side as it is, or drop --input-size for a model of fixed size",
        requested_width_, requested_height_, Printable(model_path), side(shape.in_width),
        side(shape.in_height)));
  }
  shape.in_width = requested_width_;
  shape.in_height = requested_height_;
  return Status::Ok();
}

Status CheckDepthShape(const std::string& model_path, const ModelShape& shape) {
  const std::vector<int> in = {1, shape.in_channels, shape.in_height, shape.in_width};
  const std::vector<int> out = {1, shape.out_channels, shape.out_height, shape.out_width};
  if (shape.in_channels == 3 && (shape.in_height < 0 || shape.in_width < 0)) {
    return UsageError(fmt::format(
        "model {}: input shape {} has a symbolic size; give the size to resize frames to "
        "with --input-size WxH (e.g. --input-size 256x256), or a model with a fixed input size",
        Printable(model_path), FormatShape(in)));
  }
  if (shape.in_channels != 3 || shape.in_height <= 0 || shape.in_width <= 0) {
    return UsageError(fmt::format(
        "model {}: input shape {} is not an image; a depth model takes 1x3xHxW (RGB, NCHW; "
        "NHWC 1xHxWx3 for .tflite)",
        Printable(model_path), FormatShape(in)));
  }
  if (shape.out_channels != 1 || shape.out_height <= 0 || shape.out_width <= 0) {
    return UsageError(fmt::format(
        "model {}: output shape {} is not a depth map; a depth model gives 1x1xHxW (NHWC "
        "1xHxWx1 for .tflite)",
        Printable(model_path), FormatShape(out)));
  }
  return Status::Ok();
}

}  // namespace rtpulse::e2e
