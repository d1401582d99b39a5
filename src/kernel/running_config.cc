#include "kernel/running_config.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <zlib.h>

#include <array>

namespace rtpulse::kernel {
namespace {

std::string UnameField(const FsRoot& root, const char* proc_path, const char* fallback) {
  auto line = root.ReadLine(proc_path);
  return line ? *line : std::string(fallback);
}

}  // namespace

Expected<std::string> Gunzip(std::string_view data, std::string_view origin) {
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header, not a raw zlib stream.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return Failure(fmt::format("{}: cannot start zlib", origin));
  }
  std::string out;
  std::array<char, 64 * 1024> buffer{};
  // zlib's API takes a non-const pointer but does not write through next_in.
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (true) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
    stream.avail_out = static_cast<uInt>(buffer.size());
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer.data(), buffer.size() - stream.avail_out);
    if (rc == Z_STREAM_END && stream.avail_in > 0) {
      rc = inflateReset(&stream);  // concatenated gzip members
      if (rc != Z_OK) break;
      continue;
    }
    if (rc != Z_OK) break;
  }
  inflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    return Failure(
        fmt::format("{}: not valid gzip data (zlib error {}): is it a config.gz?", origin, rc));
  }
  return out;
}

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
