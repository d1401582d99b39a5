#pragma once

#include <memory>
#include <string>

#include "e2e/inference.h"

// The inference backends live in a module loaded only when a model is (MakeBackend,
// inference_module.cc): librtpulse_e2e_inference.so holds opencv_backend.cc and
// armnn_backend.cc, linked with OpenCV's core and dnn and with Arm NN, which with their own
// dependencies are about 40 shared libraries. The commands that only measure (latency, suite,
// control, serve) then map none of them, and the memory mlockall locks stays the probe's.
namespace rtpulse::e2e {

std::unique_ptr<InferenceBackend> MakeOpenCvBackend();
std::unique_ptr<InferenceBackend> MakeArmNnBackend();

/// The inference module's entry points (extern "C", looked up with dlsym). kInferenceAbi
/// changes whenever InferenceBackend, Tensor or ModelShape change shape.
constexpr int kInferenceAbi = 1;
extern "C" {
using InferenceAbiFn = int();
/// A fresh backend of kind `kind` (BackendKind's value), or nullptr when the module was built
/// without it.
using InferenceMakeFn = InferenceBackend*(int kind);
}

/// Where one of rtpulse's modules is: `build_path` for a binary that runs inside the build
/// tree `build_tree`, else PREFIX/`install_rel` beside an installed PREFIX/bin/rtpulse.
std::string ModulePath(const std::string& build_tree, const std::string& build_path,
                       const std::string& install_rel);

}  // namespace rtpulse::e2e
