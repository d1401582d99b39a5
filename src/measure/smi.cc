#include "measure/smi.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rtpulse::measure {
namespace {

/// The value of "key : value" in /proc/cpuinfo's first processor block, or "".
std::string CpuinfoField(const std::string& cpuinfo, const std::string& key) {
  size_t at = 0;
  while (at < cpuinfo.size()) {
    const size_t end = cpuinfo.find('\n', at);
    const std::string line =
        cpuinfo.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.empty()) break;  // the first processor's block ends
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
      if (name == key) {
        const size_t value = line.find_first_not_of(' ', colon + 1);
        return value == std::string::npos ? "" : line.substr(value);
      }
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

bool HasFlag(const std::string& flags, const std::string& flag) {
  return (" " + flags + " ").find(" " + flag + " ") != std::string::npos;
}

}  // namespace

Expected<SmiCounters> SmiCounters::Open(const FsRoot& root, const std::vector<int>& cpus) {
  const std::string cpuinfo = root.Read("/proc/cpuinfo").value_or("");
  const std::string vendor = CpuinfoField(cpuinfo, "vendor_id");
  const std::string family = CpuinfoField(cpuinfo, "cpu family");
  if (vendor != "GenuineIntel" || family != "6" ||
      !HasFlag(CpuinfoField(cpuinfo, "flags"), "msr")) {
    return ResourceError(fmt::format(
        "--smi: not on this CPU: the SMI counter (MSR 0x34) is read on Intel CPUs of family 6 "
        "with MSRs, and this one is {}; drop --smi",
        vendor.empty() ? "not an x86 CPU" : fmt::format("{} family {}", vendor, family)));
  }
  SmiCounters counters;
  for (int cpu : cpus) {
    const std::string name = fmt::format("/dev/cpu/{}/msr", cpu);
    const int fd = ::open(root.Path(name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (error == ENOENT) {
        return ResourceError(
            fmt::format("--smi: {} is missing: load the msr driver (modprobe msr)", name));
      }
      return ResourceError(fmt::format("--smi: cannot open {}: {} (reading MSRs needs root)", name,
                                       std::strerror(error)));
    }
    counters.fds_[cpu] = fd;
    if (!counters.Read(cpu)) {
      return ResourceError(fmt::format(
          "--smi: CPU {} gives no SMI counter (reading MSR 0x34 through {} failed: {}); a "
          "hypervisor often hides it: measure on the bare machine or drop --smi",
          cpu, name, std::strerror(errno)));
    }
  }
  return counters;
}

SmiCounters::SmiCounters(SmiCounters&& other) noexcept : fds_(std::move(other.fds_)) {
  other.fds_.clear();
}

SmiCounters::~SmiCounters() {
  for (const auto& [cpu, fd] : fds_) ::close(fd);
}

std::optional<uint32_t> SmiCounters::Read(int cpu) const {
  const auto it = fds_.find(cpu);
  if (it == fds_.end()) return std::nullopt;
  uint64_t value = 0;
  errno = 0;
  if (::pread(it->second, &value, sizeof(value), kSmiCountMsr) !=
      static_cast<ssize_t>(sizeof(value))) {
    if (errno == 0) errno = EIO;
    return std::nullopt;
  }
  return static_cast<uint32_t>(value);
}

}  // namespace rtpulse::measure
