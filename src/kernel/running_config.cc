#include "kernel/running_config.h"

#include <fmt/format.h>
#include <sys/utsname.h>

namespace rtpulse::kernel {
namespace {

std::string UnameField(const FsRoot& root, const char* proc_path, const char* fallback) {
  auto line = root.ReadLine(proc_path);
  return line ? *line : std::string(fallback);
}

}  // namespace

Expected<RunningConfig> LoadRunningConfig(const FsRoot& root) {
  utsname uts{};
  uname(&uts);
  RunningConfig running;
  running.release = UnameField(root, "/proc/sys/kernel/osrelease", uts.release);
  running.version = UnameField(root, "/proc/sys/kernel/version", uts.version);
  // Strict: verify must not judge a config it read only half of, nor pass over a corrupt
  // /proc/config.gz for a /boot file that may belong to another build.
  auto loaded = LoadKernelConfig(root, running.release, ConfigReading::kStrict);
  if (!loaded && loaded.error().code == ExitCode::kResource) {
    // Neither file exists: say how to get one, in this command's terms.
    return ResourceError(fmt::format(
        "no config for the running kernel {}: /proc/config.gz is absent (CONFIG_IKCONFIG_PROC; "
        "if IKCONFIG=m try 'modprobe configs') and so is /boot/config-{}; pass --config FILE",
        running.release, running.release));
  }
  if (!loaded) return loaded.error();
  running.config = std::move(loaded->config);
  running.source = std::move(loaded->source);
  return running;
}

}  // namespace rtpulse::kernel
