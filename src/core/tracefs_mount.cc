#include "core/tracefs_mount.h"

#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace rtpulse {
namespace {

std::mutex g_mount_mu;
pid_t g_mounted_by = 0;  // the process that mounted kTracefsDirs[0]; 0: none

bool HasTracefs(const char* dir) {
  std::string path = dir;
  path += "/tracing_on";
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

void UnmountAtExit() {
  const std::lock_guard<std::mutex> lock(g_mount_mu);
  // A forked child that exits must not take the parent's mount away.
  if (g_mounted_by != 0 && g_mounted_by == ::getpid()) {
    ::umount2(kTracefsDirs[0], MNT_DETACH);
    g_mounted_by = 0;
  }
}

}  // namespace

void MountTracefsIfAbsent() {
  const std::lock_guard<std::mutex> lock(g_mount_mu);
  for (const char* dir : kTracefsDirs) {
    if (HasTracefs(dir)) return;
  }
  const char* point = kTracefsDirs[0];
  struct stat st {};
  if (::stat(point, &st) != 0 || !S_ISDIR(st.st_mode)) return;  // no CONFIG_TRACING
  if (::mount("nodev", point, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return;  // EPERM without CAP_SYS_ADMIN, ENODEV without tracefs: the caller says
  }
  static const bool registered = std::atexit(UnmountAtExit) == 0;
  if (!HasTracefs(point) || !registered) {
    ::umount2(point, MNT_DETACH);
    return;
  }
  g_mounted_by = ::getpid();
}

std::string TracefsMountNote() {
  const std::lock_guard<std::mutex> lock(g_mount_mu);
  if (g_mounted_by == 0 || g_mounted_by != ::getpid()) return "";
  return fmt::format(
      "tracefs was not mounted: rtpulse mounted it at {} for this run and unmounts it when it "
      "exits",
      kTracefsDirs[0]);
}

}  // namespace rtpulse
