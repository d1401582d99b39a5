#include "kernel/running_config.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include "core/gzip.h"

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

  std::string text;
  if (auto gz = root.Read("/proc/config.gz")) {
    auto plain = Gunzip(*gz, root.Path("/proc/config.gz"));
    if (!plain) return plain.error();
    text = std::move(*plain);
    running.source = "/proc/config.gz";
  } else {
    const std::string boot = "/boot/config-" + running.release;
    auto file = root.Read(boot);
    if (!file) {
      return ResourceError(fmt::format(
          "no config for the running kernel {}: /proc/config.gz is absent (CONFIG_IKCONFIG_PROC; "
          "if IKCONFIG=m try 'modprobe configs') and so is {}; pass --config FILE",
          running.release, boot));
    }
    text = std::move(*file);
    running.source = boot;
  }
  auto config = KernelConfig::Parse(text, root.Path(running.source));
  if (!config) return config.error();
  running.config = std::move(*config);
  return running;
}

}  // namespace rtpulse::kernel
