#pragma once

// A version 1 samples file written from chosen records (docs/samples-format.md), for tests
// whose ground truth is the records they wrote.

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/samples_file.h"

namespace rtpulse::testutil {

/// Writes the header, `records` in the order given and, when `trailer` is true, the trailer
/// counting them and `dropped` (false: a crashed run's file). False when it cannot write.
inline bool WriteSamplesV1(const std::string& path, const std::vector<SampleRecord>& records,
                           uint64_t dropped = 0, bool trailer = true) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  std::array<std::byte, samples_format::kHeaderBytes> header{};
  samples_format::EncodeHeader(SamplesFileInfo{}, header.data());
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  if (!records.empty()) {
    ok = ok &&
         std::fwrite(records.data(), sizeof(SampleRecord), records.size(), f) == records.size();
  }
  if (trailer) {
    std::array<std::byte, samples_format::kTrailerBytes> end{};
    samples_format::EncodeTrailer(records.size(), dropped, false, end.data());
    ok = ok && std::fwrite(end.data(), 1, end.size(), f) == end.size();
  }
  return std::fclose(f) == 0 && ok;
}

}  // namespace rtpulse::testutil
