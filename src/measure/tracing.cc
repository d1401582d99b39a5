#include "measure/tracing.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace rtpulse::measure {

Tracer::~Tracer() {
  if (tracing_on_fd_ >= 0) close(tracing_on_fd_);
  if (marker_fd_ >= 0) close(marker_fd_);
}

Status Tracer::Open(const FsRoot& root) {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    const std::string on = root.Path(std::string(dir) + "/tracing_on");
    const int fd = ::open(on.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) continue;
    tracing_on_fd_ = fd;
    dir_ = root.Path(dir);
    marker_fd_ = ::open((dir_ + "/trace_marker").c_str(), O_WRONLY | O_CLOEXEC);
    return Status::Ok();
  }
  return ResourceError(
      "cannot stop ftrace on -b: tracefs is not mounted (fix: mount -t tracefs nodev "
      "/sys/kernel/tracing, as root); the run will still stop at the spike");
}

bool Tracer::Break(int thread, int64_t latency_ns, int64_t limit_ns, bool mark) {
  if (mark && marker_fd_ >= 0) {
    char buf[128];
    char* p = buf;
    char* end = buf + sizeof(buf);
    auto put = [&](const char* s) {
      while (*s != '\0' && p < end) *p++ = *s++;
    };
    put("rtpulse: thread ");
    p = std::to_chars(p, end, thread).ptr;
    put(" hit latency threshold (");
    p = std::to_chars(p, end, latency_ns).ptr;
    put(" ns > ");
    p = std::to_chars(p, end, limit_ns).ptr;
    put(" ns)\n");
    (void)!write(marker_fd_, buf, static_cast<size_t>(p - buf));
  }
  if (tracing_on_fd_ < 0) return false;
  return write(tracing_on_fd_, "0", 1) == 1;
}

}  // namespace rtpulse::measure
