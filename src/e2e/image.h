#pragma once

#include <cstdint>
#include <vector>

// A decoded frame as every source hands it over: 8-bit BGR (OpenCV's order), row-major,
// tightly packed (stride = width * 3). Plain data so the pipeline's headers need no OpenCV.
namespace rtpulse::e2e {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> bgr;  ///< width * height * 3 bytes.

  /// Resizes the buffer for `w` x `h` (no reallocation when the size is unchanged).
  void Reshape(int w, int h) {
    width = w;
    height = h;
    bgr.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  }
  bool empty() const { return width <= 0 || height <= 0; }
};

/// A point of known metric depth in source-image pixel coordinates (a sparse reference: a
/// LiDAR return, a surveyed ground marker, or the synthetic scene's ground plane).
struct ReferencePoint {
  double x = 0;  ///< Column, pixels, 0 = left edge of the source frame.
  double y = 0;  ///< Row, pixels, 0 = top edge.
  double depth_m = 0;
};

}  // namespace rtpulse::e2e
