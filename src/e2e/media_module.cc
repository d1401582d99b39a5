// Loads librtpulse_e2e_media.so (sources.h): from the build tree for a binary that runs there,
// else from the library folder of the prefix the binary is installed in (ModulePath, which
// the inference module's loader uses too).
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "e2e/backends.h"
#include "e2e/sources.h"

namespace rtpulse::e2e {
namespace {

std::string MediaModulePath() {
#if RTPULSE_HAVE_OPENCV
  return ModulePath(RTPULSE_MEDIA_BUILD_TREE, RTPULSE_MEDIA_BUILD_PATH, RTPULSE_MEDIA_INSTALL_REL);
#else
  return "";
#endif
}

Expected<const MediaModule*> LoadMediaModuleOnce() {
  static MediaModule module;
  module.path = MediaModulePath();
  if (module.path.empty()) {
    return ResourceError(
        "OpenCV is not in this build of rtpulse (built without RTPULSE_INFERENCE); apt-get "
        "install libopencv-dev and rebuild");
  }
  void* handle = ::dlopen(module.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return ResourceError(fmt::format(
        "cannot load rtpulse's OpenCV media module ({}); install libopencv-videoio406 and "
        "libopencv-imgcodecs406 (apt-get install libopencv-dev), or reinstall rtpulse",
        why != nullptr ? why : module.path));
  }
  auto* abi = reinterpret_cast<MediaAbiFn*>(::dlsym(handle, "rtpulse_media_abi"));
  module.make_source =
      reinterpret_cast<MediaMakeSourceFn*>(::dlsym(handle, "rtpulse_media_make_source"));
  module.decode_jpeg =
      reinterpret_cast<MediaDecodeJpegFn*>(::dlsym(handle, "rtpulse_media_decode_jpeg"));
  if (abi == nullptr || abi() != kMediaAbi || module.make_source == nullptr ||
      module.decode_jpeg == nullptr) {
    return ResourceError(
        fmt::format("{} is not the media module of this rtpulse (another "
                    "version?); reinstall rtpulse",
                    module.path));
  }
  return &module;  // the handle stays open for the process's life
}

}  // namespace

std::string ModulePath(const std::string& build_tree, const std::string& build_path,
                       const std::string& install_rel) {
  char exe[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  const std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  if (!build_tree.empty() && self.rfind(build_tree + "/", 0) == 0) return build_path;
  // Installed: PREFIX/bin/rtpulse and PREFIX/LIBDIR/rtpulse/, whatever the prefix (the .deb's
  // /usr or a `cmake --install` prefix).
  const size_t slash = self.rfind('/');
  const std::string bin_dir = slash == std::string::npos ? "." : self.substr(0, slash);
  return bin_dir + "/../" + install_rel;
}

Expected<const MediaModule*> LoadMediaModule() {
  static const Expected<const MediaModule*> kLoaded = LoadMediaModuleOnce();
  return kLoaded;
}

}  // namespace rtpulse::e2e
