#include "support/tracefs.h"

#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>

namespace rtpulse::testutil {

std::string TracefsUnavailable() {
  if (geteuid() != 0) return "needs root for tracefs";
  const std::string instances = std::string(kTracefsDir) + "/instances";
  if (!std::filesystem::is_directory(instances)) {
    (void)mount("nodev", kTracefsDir, "tracefs", 0, nullptr);
  }
  if (!std::filesystem::is_directory(instances)) {
    return std::string("tracefs cannot be mounted at ") + kTracefsDir;
  }
  return "";
}

}  // namespace rtpulse::testutil
