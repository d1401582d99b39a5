// MakeBackend: the inference backends from librtpulse_e2e_inference.so (backends.h), loaded
// on the first call, so that only a run with a model maps OpenCV and Arm NN.
#include <dlfcn.h>
#include <fmt/format.h>

#include <string>

#include "e2e/backends.h"
#include "e2e/inference.h"

namespace rtpulse::e2e {
namespace {

struct InferenceModule {
  InferenceMakeFn* make = nullptr;
};

Expected<InferenceModule> LoadInferenceModuleOnce() {
#if RTPULSE_HAVE_OPENCV
  const std::string path = ModulePath(RTPULSE_INFERENCE_BUILD_TREE, RTPULSE_INFERENCE_BUILD_PATH,
                                      RTPULSE_INFERENCE_INSTALL_REL);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return ResourceError(fmt::format(
        "cannot load rtpulse's inference module ({}); install OpenCV's and Arm NN's libraries "
        "(scripts/install-deps), or reinstall rtpulse",
        why != nullptr ? why : path));
  }
  auto* abi = reinterpret_cast<InferenceAbiFn*>(::dlsym(handle, "rtpulse_inference_abi"));
  auto* make = reinterpret_cast<InferenceMakeFn*>(::dlsym(handle, "rtpulse_inference_make"));
  if (abi == nullptr || abi() != kInferenceAbi || make == nullptr) {
    return ResourceError(fmt::format(
        "{} is not the inference module of this rtpulse (another version?); reinstall rtpulse",
        path));
  }
  return InferenceModule{make};  // the handle stays open for the process's life
#else
  return ResourceError("no inference module in this build");
#endif
}

}  // namespace

Expected<std::unique_ptr<InferenceBackend>> MakeBackend(BackendKind kind) {
  if (!BackendCompiledIn(kind)) {
    const char* packages = kind == BackendKind::kOpenCv
                               ? "libopencv-dev"
                               : "libarmnn-dev libarmnntfliteparser-dev libarmnn-cpuref-backend22";
    return ResourceError(fmt::format(
        "backend {}: not in this build of rtpulse (built without RTPULSE_INFERENCE or without "
        "its library); install {} (scripts/install-deps) and rebuild with -DRTPULSE_INFERENCE=ON",
        BackendKindName(kind), packages));
  }
  static const Expected<InferenceModule> kLoaded = LoadInferenceModuleOnce();
  if (!kLoaded) return kLoaded.error();
  std::unique_ptr<InferenceBackend> backend(kLoaded->make(static_cast<int>(kind)));
  if (backend == nullptr) {
    return ResourceError(fmt::format("the inference module has no {} backend; reinstall rtpulse",
                                     BackendKindName(kind)));
  }
  return backend;
}

}  // namespace rtpulse::e2e
