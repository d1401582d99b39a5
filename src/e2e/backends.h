#pragma once

#include <memory>

#include "e2e/inference.h"

// The implementations behind MakeBackend (inference.cc). Each is compiled only when its
// library was found (src/e2e/CMakeLists.txt sets RTPULSE_HAVE_OPENCV / RTPULSE_HAVE_ARMNN).
namespace rtpulse::e2e {

std::unique_ptr<InferenceBackend> MakeOpenCvBackend();
std::unique_ptr<InferenceBackend> MakeArmNnBackend();

}  // namespace rtpulse::e2e
