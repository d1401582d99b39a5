#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "e2e/frame_source.h"

// The implementations behind MakeSource (frame_source.cc), one file each. The OpenCV ones are
// compiled only with RTPULSE_INFERENCE (src/e2e/CMakeLists.txt sets RTPULSE_HAVE_OPENCV).
namespace rtpulse::e2e {

std::unique_ptr<FrameSource> MakeSyntheticSource(const SourceSpec& spec);
std::unique_ptr<FrameSource> MakeVideoSource(const SourceSpec& spec);
std::unique_ptr<FrameSource> MakeImagesSource(const SourceSpec& spec);
std::unique_ptr<FrameSource> MakeV4l2Source(const SourceSpec& spec);

/// YUYV (4:2:2, BT.601 limited range) to BGR, in rtpulse's own fixed-point code; `stride`
/// bytes per source row, `dst` width * height * 3 bytes.
void YuyvToBgr(const uint8_t* src, size_t stride, int width, int height, uint8_t* dst);

/// The file name part of `path` ("clip.mp4" of "/a/clip.mp4"), for Describe().
std::string SourceBaseName(const std::string& path);

}  // namespace rtpulse::e2e
