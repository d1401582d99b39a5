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

const LoadOption kIoFsync{"fsync", LoadOption::Kind::kFlag, "fsync after each write", "1"};
const LoadOption kIoDir{"dir", LoadOption::Kind::kText, "folder of the file written", "/tmp"};
const LoadOption kIoKb{"kb", LoadOption::Kind::kWhole, "size of each write, in KiB", "4", 1, 65536};
const LoadOption kIoMb{"mb",
                       LoadOption::Kind::kWhole,
                       "file size, in MB: writes start over from its beginning",
                       "64",
                       1,
                       1 << 20};

Status ValidateIo(const LoadParams& p) {
  const std::string dir = TextOption(p, kIoDir);
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return UsageError(fmt::format("io: dir={} is not a writable folder ({}); give dir=PATH", dir,
                                  std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

LoadDescriptor IoLoad() {
  return {"io",
          "block I/O: kb= KiB writes to a file in dir=, fsync each",
          {kIoFsync, kIoDir, kIoKb, kIoMb},
          false,
          &AlwaysSupported,
          &ValidateIo,
          [](const LoadSpec& spec) {
            const bool fsync = FlagOption(spec.params, kIoFsync);
            return MakeWorkerLoad(spec,
                                  [](const LoadParams& p) -> std::unique_ptr<Work> {
                                    return std::make_unique<IoWork>(
                                        TextOption(p, kIoDir),
                                        static_cast<size_t>(WholeOption(p, kIoKb)) * 1024,
                                        static_cast<size_t>(WholeOption(p, kIoMb)) * 1024 * 1024,
                                        FlagOption(p, kIoFsync));
                                  },
                                  {fsync ? "fsyncs" : "writes", true, false});
          }};
}

}  // namespace rtpulse::load
