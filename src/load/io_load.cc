// io: block writes to a file in dir=, each followed by fsync (fsync=1), so the block layer,
// the filesystem journal and their interrupts run.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "load/builtins.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

class IoWork final : public Work {
 public:
  IoWork(std::string dir, size_t block, size_t file_bytes, bool fsync)
      : dir_(std::move(dir)), block_(block), file_bytes_(file_bytes), fsync_(fsync) {}
  ~IoWork() override {
    if (fd_ >= 0) close(fd_);
  }
  IoWork(const IoWork&) = delete;
  IoWork& operator=(const IoWork&) = delete;

  Status Setup() override {
    std::string path = dir_ + "/rtpulse-io-XXXXXX";
    fd_ = mkstemp(path.data());
    if (fd_ < 0) {
      return Failure(fmt::format("cannot create a file in {}: {}", dir_, std::strerror(errno)));
    }
    unlink(path.c_str());  // Nothing is left behind, however the worker ends.
    data_.assign(block_, 'r');
    return Status::Ok();
  }
  void Step(uint64_t& ops, uint64_t& bytes) override {
    if (offset_ + block_ > file_bytes_) offset_ = 0;
    const ssize_t n = pwrite(fd_, data_.data(), block_, static_cast<off_t>(offset_));
    if (n > 0) {
      offset_ += static_cast<size_t>(n);
      bytes += static_cast<uint64_t>(n);
    }
    if (fsync_) fsync(fd_);
    ++ops;
  }

 private:
  std::string dir_;
  size_t block_;
  size_t file_bytes_;
  bool fsync_;
  int fd_ = -1;
  size_t offset_ = 0;
  std::vector<char> data_;
};

Status ValidateIo(const LoadParams& p) {
  if (auto v = IntOption(p, "fsync", 1, 0, 1); !v) return v.error();
  if (auto v = IntOption(p, "kb", 4, 1, 65536); !v) return v.error();
  if (auto v = IntOption(p, "mb", 64, 1, 1 << 20); !v) return v.error();
  const std::string dir = p.Option("dir", "/tmp");
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return UsageError(fmt::format("io: dir={} is not a writable folder ({}); give dir=PATH", dir,
                                  std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

LoadDescriptor IoLoad() {
  return {"io",
          "block I/O: kb= KiB writes (default 4) to a file in dir= (default /tmp), fsync each",
          {"fsync", "dir", "kb", "mb"},
          false,
          &AlwaysSupported,
          &ValidateIo,
          [](const LoadSpec& spec) {
            const bool fsync = spec.params.Option("fsync", "1") == "1";
            return MakeWorkerLoad(
                spec,
                [](const LoadParams& p) -> std::unique_ptr<Work> {
                  return std::make_unique<IoWork>(
                      p.Option("dir", "/tmp"),
                      static_cast<size_t>(IntOption(p, "kb", 4, 1, 65536).value()) * 1024,
                      static_cast<size_t>(IntOption(p, "mb", 64, 1, 1 << 20).value()) * 1024 * 1024,
                      p.Option("fsync", "1") == "1");
                },
                {fsync ? "fsyncs" : "writes", true, false});
          }};
}

}  // namespace rtpulse::load
