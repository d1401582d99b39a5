// The entry points of librtpulse_e2e_inference.so (backends.h), the only symbols it exports.
#include "e2e/backends.h"

extern "C" {

__attribute__((visibility("default"))) int rtpulse_inference_abi() {
  return rtpulse::e2e::kInferenceAbi;
}

__attribute__((visibility("default"))) rtpulse::e2e::InferenceBackend* rtpulse_inference_make(
    int kind) {
  using rtpulse::e2e::BackendKind;
#if RTPULSE_HAVE_OPENCV
  if (kind == static_cast<int>(BackendKind::kOpenCv)) {
    return rtpulse::e2e::MakeOpenCvBackend().release();
  }
#endif
#if RTPULSE_HAVE_ARMNN
  if (kind == static_cast<int>(BackendKind::kArmNn)) {
    return rtpulse::e2e::MakeArmNnBackend().release();
  }
#endif
  return nullptr;
}

}  // extern "C"
