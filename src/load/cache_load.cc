// cache: random cache-line writes over a buffer twice the last-level cache, evicting what
// other tasks keep there (the "noisy neighbour" of a shared L3).
#include <vector>

#include "load/builtins.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

constexpr size_t kLine = 64;

int64_t DefaultKb() {
  return 2 * LoadCacheBytes() / 1024;
}

class CacheWork final : public Work {
 public:
  explicit CacheWork(size_t bytes) : lines_(std::max<size_t>(1, bytes / kLine)) {}
  Status Setup() override {
    buffer_.assign(lines_ * kLine, 0);
    return Status::Ok();
  }
  void Step(uint64_t& ops, uint64_t& bytes) override {
    // 4096 random line writes; xorshift so the prefetcher cannot follow.
    for (int i = 0; i < 4096; ++i) {
      state_ ^= state_ << 13;
      state_ ^= state_ >> 7;
      state_ ^= state_ << 17;
      buffer_[(state_ % lines_) * kLine] += 1;
    }
    ops += 4096;
    bytes += 4096 * kLine;
  }

 private:
  size_t lines_;
  std::vector<unsigned char> buffer_;
  uint64_t state_ = 88172645463325252ULL;
};

}  // namespace

const LoadOption kCacheKb{"kb",
                          LoadOption::Kind::kWhole,
                          "buffer written over, in KiB",
                          "2x the last-level cache",
                          4,
                          1 << 30,
                          {},
                          &DefaultKb};

LoadDescriptor CacheLoad() {
  return {"cache",
          "shared cache: random line writes over kb= KiB",
          {kCacheKb},
          true,
          &AlwaysSupported,
          nullptr,
          [](const LoadSpec& spec) {
            return MakeWorkerLoad(
                spec,
                [](const LoadParams& p) -> std::unique_ptr<Work> {
                  const int64_t kb = WholeOption(p, kCacheKb);
                  return std::make_unique<CacheWork>(static_cast<size_t>(kb) * 1024);
                },
                {"lines", false, true});
          }};
}

}  // namespace rtpulse::load
