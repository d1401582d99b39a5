#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "e2e/frame_source.h"

// The implementations behind MakeSource (frame_source.cc), one file each.
//
// Video files, image folders and MJPEG frames are decoded by OpenCV's videoio and imgcodecs,
// whose Debian builds pull in about 250 MB of libraries (FFmpeg, GStreamer, GDAL). They live
// in a module loaded only when such a source is asked for (librtpulse_e2e_media.so,
// opencv_sources.cc, built with RTPULSE_INFERENCE), so the rtpulse binary itself needs only
// OpenCV's core and dnn: the QEMU guest's initramfs and minimal installs stay small.
namespace rtpulse::e2e {

std::unique_ptr<FrameSource> MakeSyntheticSource(const SourceSpec& spec);
std::unique_ptr<FrameSource> MakeV4l2Source(const SourceSpec& spec);

/// The media module's entry points (extern "C", looked up with dlsym). kMediaAbi changes
/// whenever SourceSpec, CapturedFrame, Image or FrameSource change shape.
constexpr int kMediaAbi = 1;
extern "C" {
using MediaAbiFn = int();
/// A video or images source for `spec`, or nullptr for another kind.
using MediaMakeSourceFn = FrameSource*(const SourceSpec* spec);
/// Decodes one JPEG frame into `image`; false when it is not decodable.
using MediaDecodeJpegFn = bool(const uint8_t* data, size_t size, Image* image);
}

/// The media module, loaded once (thread-safe); a resource error naming what is missing.
struct MediaModule {
  MediaMakeSourceFn* make_source = nullptr;
  MediaDecodeJpegFn* decode_jpeg = nullptr;
  std::string path;
};
Expected<const MediaModule*> LoadMediaModule();

/// YUYV (4:2:2, BT.601 limited range) to BGR, in rtpulse's own fixed-point code; `stride`
/// bytes per source row, `dst` width * height * 3 bytes.
void YuyvToBgr(const uint8_t* src, size_t stride, int width, int height, uint8_t* dst);

}  // namespace rtpulse::e2e
