// Writes the seed corpus of fuzz_samples_file (scripts/fuzz): samples files laid out by the
// format's own encoders (core/samples_file.h), since the tests keep none as fixtures: a
// clean run with a trailer, one cut short after SIGKILL (no trailer, a partial record), an
// empty run, and one with missed periods and several threads.
// Usage: make_samples_seeds DIR

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/samples_file.h"

namespace {

std::vector<std::byte> SeedFile(int records, int threads, bool trailer, size_t cut) {
  using namespace rtpulse;
  std::vector<std::byte> out(samples_format::kHeaderBytes);
  SamplesFileInfo info;
  info.start_realtime_ns = 1'700'000'000'000'000'000;
  info.start_monotonic_ns = 5'000'000'000;
  samples_format::EncodeHeader(info, out.data());
  for (int i = 0; i < records; ++i) {
    SampleRecord r{};
    r.thread = static_cast<uint16_t>(i % threads);
    r.seq = static_cast<uint64_t>(i / threads) + (i == 7 ? 3 : 0);
    r.expected_ns = info.start_monotonic_ns + static_cast<int64_t>(r.seq) * 1'000'000;
    r.actual_ns = r.expected_ns + 2'000 + (i % 5) * 700 + (i == 7 ? 2'500'000 : 0);
    r.cpu = static_cast<uint16_t>(r.thread);
    r.wake_path = 1;
    r.flags = i == 7 ? SampleRecord::kMissed : 0;
    const auto* bytes = reinterpret_cast<const std::byte*>(&r);
    out.insert(out.end(), bytes, bytes + sizeof r);
  }
  if (trailer) {
    std::byte t[samples_format::kTrailerBytes];
    samples_format::EncodeTrailer(static_cast<uint64_t>(records), 0, false, t);
    out.insert(out.end(), t, t + sizeof t);
  }
  out.resize(out.size() - cut);
  return out;
}

bool WriteSeed(const std::string& path, const std::vector<std::byte>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_samples_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok = WriteSeed(dir + "/clean.bin", SeedFile(20, 1, true, 0)) &&
                  WriteSeed(dir + "/killed.bin", SeedFile(12, 2, false, 11)) &&
                  WriteSeed(dir + "/empty.bin", SeedFile(0, 1, true, 0)) &&
                  WriteSeed(dir + "/threads.bin", SeedFile(40, 4, true, 0));
  if (!ok) {
    std::perror(dir.c_str());
    return 1;
  }
  return 0;
}
