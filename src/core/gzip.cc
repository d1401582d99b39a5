#include "core/gzip.h"

#include <fmt/format.h>
#include <zlib.h>

#include <array>

namespace rtpulse {
namespace {

/// 16 + MAX_WBITS: a gzip header and trailer, not a raw zlib stream.
constexpr int kGzipWindowBits = 16 + MAX_WBITS;

Bytef* InputBytes(std::string_view data) {
  // zlib's API takes a non-const pointer but never writes through next_in.
  return reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
}

}  // namespace

Expected<std::string> Gunzip(std::string_view data, std::string_view origin) {
  z_stream stream{};
  if (inflateInit2(&stream, kGzipWindowBits) != Z_OK) {
    return Failure(fmt::format("{}: cannot start zlib", origin));
  }
  std::string out;
  std::array<char, 64 * 1024> buffer{};
  stream.next_in = InputBytes(data);
  stream.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (true) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
    stream.avail_out = static_cast<uInt>(buffer.size());
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer.data(), buffer.size() - stream.avail_out);
    if (rc == Z_STREAM_END && stream.avail_in > 0) {
      rc = inflateReset(&stream);  // another gzip member follows
      if (rc != Z_OK) break;
      continue;
    }
    if (rc != Z_OK) break;
  }
  inflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    return Failure(fmt::format("{}: not valid gzip data (zlib error {})", origin, rc));
  }
  return out;
}

Expected<std::string> Gzip(std::string_view data) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return Failure("cannot start zlib");
  }
  std::string out;
  std::array<char, 64 * 1024> buffer{};
  stream.next_in = InputBytes(data);
  stream.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  do {
    stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
    stream.avail_out = static_cast<uInt>(buffer.size());
    rc = deflate(&stream, Z_FINISH);
    out.append(buffer.data(), buffer.size() - stream.avail_out);
  } while (rc == Z_OK);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) return Failure(fmt::format("gzip failed (zlib error {})", rc));
  return out;
}

}  // namespace rtpulse
