#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace rtpulse::e2e {

/// The declared graph inputs and outputs of an ONNX file, read from its protobuf wire format
/// directly (OpenCV 4.6's importer does not expose the declared input shape, which the
/// preprocess needs). A dimension that is symbolic or absent is -1.
struct OnnxSignature {
  std::vector<std::vector<int64_t>> inputs;   ///< Graph inputs that are not initializers.
  std::vector<std::vector<int64_t>> outputs;  ///< Graph outputs.
};

/// Usage error naming the file when it is not a well-formed ONNX model (truncated, not
/// protobuf, no graph).
Expected<OnnxSignature> ReadOnnxSignature(const std::string& path);

}  // namespace rtpulse::e2e
