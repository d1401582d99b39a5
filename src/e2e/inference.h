#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

// The inference stage of `rtpulse e2e` (docs/e2e.md, "Inference backends and the default
// model"): one interface, two implementations (OpenCV DNN for .onnx, Arm NN's TfLite parser
// for .tflite), an optional build component (RTPULSE_INFERENCE) so a lean build still links.
namespace rtpulse::e2e {

/// A dense float tensor, NCHW whatever the backend's own layout (the Arm NN backend converts
/// from and to NHWC itself), batch 1.
struct Tensor {
  std::vector<int> shape;  ///< {1, C, H, W}.
  std::vector<float> data;

  /// Product of `shape` (0 for an empty shape).
  size_t ElementCount() const;
};

/// What the pipeline needs to know about a loaded depth model: an image in (1 x 3 x H x W),
/// one relative-depth map out (1 x 1 x H' x W').
struct ModelShape {
  int in_channels = 0;
  int in_height = 0;
  int in_width = 0;
  int out_channels = 0;
  int out_height = 0;
  int out_width = 0;
};

enum class BackendKind { kOpenCv, kArmNn };

/// The --backend names: "opencv", "armnn". Usage error with the list otherwise.
Expected<BackendKind> ParseBackendKind(std::string_view text);
std::string_view BackendKindName(BackendKind kind);
/// The backend a model file's extension calls for: .onnx -> opencv, .tflite -> armnn; a usage
/// error naming the file and the two extensions otherwise.
Expected<BackendKind> BackendForModel(const std::string& model_path);
/// Whether this build has the backend (RTPULSE_INFERENCE and its library found at build time).
bool BackendCompiledIn(BackendKind kind);

class InferenceBackend {
 public:
  virtual ~InferenceBackend() = default;

  /// --input-size: the input height and width for a model whose input size is symbolic
  /// (1x3x?x?), asked before Load. A model with a fixed size that differs is a usage error in
  /// Load; 0 (the default) asks for none.
  void RequestInputSize(int width, int height) {
    requested_width_ = width;
    requested_height_ = height;
  }

  /// Reads and prepares `model_path` with `threads` worker threads (>= 1). Errors: the file
  /// missing or unreadable (usage), not a model of this backend's format or truncated (usage),
  /// a shape other than 1x3xHxW in and 1x1xH'xW' out (usage), the runtime or its compute
  /// backend not installed (resource). Load runs one inference on zeros, so a model that
  /// parses but cannot run fails here, not in the first frame.
  virtual Status Load(const std::string& model_path, int threads) = 0;
  /// One inference. `input` must have model().in_* as shape; `output` is resized to the
  /// out_* shape (no allocation after the first call with the same shape).
  virtual Status Run(const Tensor& input, Tensor& output) = 0;

  /// Runtime and device used, e.g. "opencv-dnn 4.6.0 CPU", "armnn 22.0 CpuRef".
  virtual std::string name() const = 0;
  /// Why that device: e.g. "CpuAcc not available (no Arm_CpuAcc_backend.so in DIR); CpuRef is
  /// Arm NN's portable reference backend, for correctness, not speed".
  virtual std::string why() const = 0;
  /// Worker threads the runtime actually uses (CpuRef: 1, whatever was asked).
  virtual int threads() const = 0;
  virtual const ModelShape& shape() const = 0;

 protected:
  /// Applies the requested input size to `shape` (symbolic sides, < 0, take it); a usage
  /// error naming --input-size when the model's fixed size differs or a side stays symbolic.
  Status ApplyRequestedInputSize(const std::string& model_path, ModelShape& shape) const;

  int requested_width_ = 0;
  int requested_height_ = 0;
};

/// A fresh backend of `kind`; a resource error naming the packages and the build option when
/// this build does not have it.
Expected<std::unique_ptr<InferenceBackend>> MakeBackend(BackendKind kind);

/// Usage error unless `path` is a readable regular file that is not empty.
Status CheckModelFile(const std::string& path);
/// Usage error unless `threads` >= 1 (the --threads value).
Status CheckThreads(int threads);
/// Usage error unless `shape` is 1x3xHxW in and 1x1xH'xW' out; names the model and the shape.
Status CheckDepthShape(const std::string& model_path, const ModelShape& shape);
/// "1x3x256x256".
std::string FormatShape(const std::vector<int>& shape);

}  // namespace rtpulse::e2e
