// memory: streams over a buffer several times the last-level cache, so every access goes to
// DRAM and the load competes for memory bandwidth.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/fs_root.h"
#include "core/memory_facts.h"
#include "load/builtins.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

constexpr size_t kBlockBytes = 256 * 1024;  // One step: read and write 256 KiB.

int64_t DefaultMb() {
  return std::max<int64_t>(64, 4 * LoadCacheBytes() / (1024 * 1024));
}

class MemoryWork final : public Work {
 public:
  explicit MemoryWork(size_t bytes) : words_(bytes / sizeof(uint64_t)) {}
  Status Setup() override {
    buffer_.assign(words_, 1);  // Touch every page now, not during the run.
    return Status::Ok();
  }
  void Step(uint64_t& ops, uint64_t& bytes) override {
    const size_t block = kBlockBytes / sizeof(uint64_t);
    if (offset_ + block > buffer_.size()) offset_ = 0;
    uint64_t* p = buffer_.data() + offset_;
    for (size_t i = 0; i < block; ++i) p[i] += 1;  // Read + write: a STREAM-like update.
    offset_ += block;
    ++ops;
    bytes += 2 * kBlockBytes;
  }

 private:
  size_t words_;
  std::vector<uint64_t> buffer_;
  size_t offset_ = 0;
};

}  // namespace

int64_t LoadCacheBytes() {
  const uint64_t bytes = rtpulse::LastLevelCacheBytes(FsRoot::Live());
  return bytes > 0 ? static_cast<int64_t>(bytes) : int64_t{8} * 1024 * 1024;
}

const LoadOption kMemoryMb{"mb",
                           LoadOption::Kind::kWhole,
                           "buffer streamed over, in MB",
                           "4x the last-level cache, at least 64",
                           1,
                           1 << 20,
                           {},
                           &DefaultMb};

LoadDescriptor MemoryLoad() {
  return {"memory",
          "memory bandwidth: read+write streaming over mb= MB",
          {kMemoryMb},
          true,
          &AlwaysSupported,
          nullptr,
          [](const LoadSpec& spec) {
            return MakeWorkerLoad(
                spec,
                [](const LoadParams& p) -> std::unique_ptr<Work> {
                  const int64_t mb = WholeOption(p, kMemoryMb);
                  return std::make_unique<MemoryWork>(static_cast<size_t>(mb) * 1024 * 1024);
                },
                {"blocks", true, true});
          }};
}

}  // namespace rtpulse::load
