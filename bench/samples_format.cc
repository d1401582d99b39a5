// Samples format version 2 on real data (bench/samples_format/run): bytes per sample, the
// encoder's rate on one core (the writer thread's work: AppendBlockV2 over 4096-record
// blocks) and the decoder's (ReadSamplesFile of the re-encoded file, CRC checks included).
// Also proves the round trip: the decoded records must equal the input, byte for byte.
//
// usage: rtpulse_samples_format FILE [ROUNDS]   (FILE: any samples file, version 1 or 2)

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/samples_file.h"

namespace {

using rtpulse::SampleRecord;

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [ROUNDS]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  std::vector<SampleRecord> records;
  auto read =
      rtpulse::ReadSamplesFile(argv[1], [&](const SampleRecord& r) { records.push_back(r); });
  if (!read) {
    std::fprintf(stderr, "%s\n", read.error().message.c_str());
    return 2;
  }
  if (records.empty()) {
    std::fprintf(stderr, "%s: no records\n", argv[1]);
    return 2;
  }
  namespace sf = rtpulse::samples_format;
  std::vector<std::byte> file;
  std::vector<rtpulse::SamplesBlock> blocks;
  double best_encode = 1e30;
  for (int round = 0; round < rounds; ++round) {
    file.assign(sf::kHeaderBytes, std::byte{0});
    sf::EncodeHeaderV2(read->info, file.data());
    blocks.clear();
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t at = 0; at < records.size(); at += sf::kV2MaxBlockRecords) {
      const size_t n = std::min<size_t>(sf::kV2MaxBlockRecords, records.size() - at);
      blocks.push_back(
          {file.size(), records[at].seq, records[at].expected_ns, static_cast<uint32_t>(n)});
      sf::AppendBlockV2(records.data() + at, n, file);
    }
    best_encode = std::min(best_encode, SecondsSince(t0));
  }
  const uint64_t index_offset = file.size();
  sf::AppendIndexAndTrailerV2(blocks, records.size(), 0, false, index_offset, file);

  std::string tmp = fmt::format("/tmp/rtpulse_samples_format.{}", ::getpid());
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  if (out == nullptr || std::fwrite(file.data(), 1, file.size(), out) != file.size() ||
      std::fclose(out) != 0) {
    std::fprintf(stderr, "cannot write %s\n", tmp.c_str());
    return 1;
  }
  double best_decode = 1e30;
  bool same = true;
  for (int round = 0; round < rounds; ++round) {
    size_t i = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto again = rtpulse::ReadSamplesFile(tmp, [&](const SampleRecord& r) {
      same = same && i < records.size() && std::memcmp(&r, &records[i], sizeof(r)) == 0;
      ++i;
    });
    best_decode = std::min(best_decode, SecondsSince(t0));
    same = same && again && i == records.size();
  }
  ::unlink(tmp.c_str());
  const double n = static_cast<double>(records.size());
  std::printf(
      "{\"input\": \"%s\", \"input_version\": %u, \"records\": %zu, \"blocks\": %zu, "
      "\"v2_bytes\": %zu, \"v1_bytes\": %zu, \"bytes_per_sample\": %.3f, "
      "\"encode_samples_per_s\": %.0f, \"decode_samples_per_s\": %.0f, \"lossless\": %s}\n",
      argv[1], read->version, records.size(), blocks.size(), file.size(),
      64 + 32 * records.size() + 32, static_cast<double>(file.size()) / n, n / best_encode,
      n / best_decode, same ? "true" : "false");
  return same ? 0 : 1;
}
