// A V4L2 capture device, streamed through four mmap'ed buffers (docs/e2e.md, "Sources"). The
// capture time is the driver's buffer timestamp when it is on CLOCK_MONOTONIC, so the latency
// the pipeline reports starts at the camera (start of exposure or end of frame, as the driver
// says) and includes the driver's queue.
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/clock.h"
#include "core/printable.h"
#include "e2e/sources.h"

namespace rtpulse::e2e {
namespace {

constexpr int kV4l2Buffers = 4;

int V4l2Ioctl(int fd, unsigned long request, void* arg) {
  int r = 0;
  do {
    r = ::ioctl(fd, request, arg);
  } while (r < 0 && errno == EINTR);
  return r;
}

std::string V4l2FourccName(uint32_t fourcc) {
  std::string name;
  for (int i = 0; i < 4; ++i) {
    const char c = static_cast<char>((fourcc >> (8 * i)) & 0xff);
    name += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name;
}

bool V4l2IsJpeg(uint32_t fourcc) {
  return fourcc == V4L2_PIX_FMT_MJPEG || fourcc == V4L2_PIX_FMT_JPEG;
}

// The pixel formats rtpulse converts itself, and JPEG when the media module decodes it.
bool V4l2FormatSupported(uint32_t fourcc, bool jpeg) {
  switch (fourcc) {
    case V4L2_PIX_FMT_YUYV:
    case V4L2_PIX_FMT_BGR24:
    case V4L2_PIX_FMT_RGB24:
      return true;
    default:
      return jpeg && V4l2IsJpeg(fourcc);
  }
}

int V4l2FormatRank(uint32_t fourcc) {
  switch (fourcc) {
    case V4L2_PIX_FMT_YUYV:
      return 0;
    case V4L2_PIX_FMT_BGR24:
      return 1;
    case V4L2_PIX_FMT_RGB24:
      return 2;
    default:
      return 3;
  }
}

uint8_t V4l2YuvClamp(int v) {
  return static_cast<uint8_t>(std::clamp(v, 0, 255));
}

}  // namespace

// ITU-R BT.601, limited range (what UVC cameras and vivid's default YUYV use), in 8.8 fixed
// point: R = 1.164 (Y-16) + 1.596 (V-128), G = 1.164 (Y-16) - 0.392 (U-128) - 0.813 (V-128),
// B = 1.164 (Y-16) + 2.017 (U-128); Y below 16 counts as 16 (as OpenCV's conversion does).
void YuyvToBgr(const uint8_t* src, size_t stride, int width, int height, uint8_t* dst) {
  for (int y = 0; y < height; ++y) {
    const uint8_t* s = src + static_cast<size_t>(y) * stride;
    uint8_t* d = dst + static_cast<size_t>(y) * static_cast<size_t>(width) * 3;
    for (int x = 0; x < width; x += 2) {
      const int u = s[1] - 128;
      const int v = s[3] - 128;
      const int ruv = 409 * v;
      const int guv = -100 * u - 208 * v;
      const int buv = 516 * u;
      for (int k = 0; k < 2 && x + k < width; ++k) {
        const int c = 298 * std::max(s[2 * k] - 16, 0) + 128;  // footroom is black
        d[0] = V4l2YuvClamp((c + buv) >> 8);
        d[1] = V4l2YuvClamp((c + guv) >> 8);
        d[2] = V4l2YuvClamp((c + ruv) >> 8);
        d += 3;
      }
      s += 4;
    }
  }
}

namespace {

struct V4l2MappedBuffer {
  void* start = MAP_FAILED;
  size_t length = 0;
};

class V4l2Source final : public FrameSource {
 public:
  explicit V4l2Source(const SourceSpec& spec) : spec_(spec) {}
  ~V4l2Source() override { Close(); }
  V4l2Source(const V4l2Source&) = delete;
  V4l2Source& operator=(const V4l2Source&) = delete;

  Status Open() override {
    if (Status s = OpenDevice(); !s) return Fail(s);
    if (Status s = QueryCapabilities(); !s) return Fail(s);
    if (Status s = ChooseFormat(); !s) return Fail(s);
    if (Status s = SetFrameRate(); !s) return Fail(s);
    if (Status s = MapBuffers(); !s) return Fail(s);
    if (Status s = StartStreaming(); !s) return Fail(s);
    return Status::Ok();
  }

  Expected<bool> Read(CapturedFrame& frame) override {
    frame.read_start_ns = MonotonicNs();
    v4l2_buffer buf{};
    while (true) {
      if (Status s = WaitForFrame(); !s) return s.error();
      buf = {};
      buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buf.memory = V4L2_MEMORY_MMAP;
      if (V4l2Ioctl(fd_, VIDIOC_DQBUF, &buf) < 0) {
        if (errno == EAGAIN) continue;
        return Failure(fmt::format("{}: VIDIOC_DQBUF failed ({})", Printable(spec_.path),
                                   std::strerror(errno)));
      }
      if ((buf.flags & V4L2_BUF_FLAG_ERROR) == 0 && buf.bytesused > 0) break;
      // A frame the driver marks corrupt is given back and counted as lost.
      pending_corrupt_ += NoteSequence(buf.sequence) + 1;
      if (Status s = Requeue(buf); !s) return s.error();
    }
    // Taken before the buffer goes back: VIDIOC_QBUF rewrites the struct (sequence and
    // timestamp cleared).
    const uint32_t sequence = buf.sequence;
    const TimestampSource stamp = StampOf(buf.flags);
    const int64_t driver_ns = static_cast<int64_t>(buf.timestamp.tv_sec) * 1'000'000'000 +
                              static_cast<int64_t>(buf.timestamp.tv_usec) * 1000;
    const uint32_t lost = NoteSequence(sequence);
    Status converted = Convert(buf, frame.image);
    Status requeued = Requeue(buf);
    if (!converted) return converted.error();
    if (!requeued) return requeued.error();
    frame.seq = sequence;
    frame.lost_before = lost + pending_corrupt_;
    pending_corrupt_ = 0;
    timestamp_source_ = stamp;
    frame.capture_ns = stamp == TimestampSource::kRead ? frame.read_start_ns : driver_ns;
    frame.read_end_ns = MonotonicNs();
    return true;
  }

  TimestampSource timestamp_source() const override { return timestamp_source_; }

  std::string Describe() const override {
    const bool resized = spec_.width > 0 && (spec_.width != width_ || spec_.height != height_);
    return fmt::format("v4l2 {} ({} {}, {}x{}{} {}, {}, timestamps {})", Printable(spec_.path),
                       driver_, card_, width_, height_,
                       resized ? fmt::format(" (asked {}x{})", spec_.width, spec_.height) : "",
                       V4l2FourccName(pixel_format_),
                       fps_ > 0 ? fmt::format("{:.4g} fps", fps_) : std::string("fps not known"),
                       TimestampSourceName(timestamp_source_));
  }

  bool SelfPaced() const override { return true; }

 private:
  Status Fail(const Status& status) {
    Close();
    return status;
  }

  std::string Name() const { return Printable(spec_.path); }

  Status OpenDevice() {
    struct stat st {};
    if (::stat(spec_.path.c_str(), &st) != 0) {
      return UsageError(fmt::format(
          "--source {}: {} does not exist ({}); name the camera's device, see ls /dev/video* "
          "or v4l2-ctl --list-devices",
          Printable(spec_.text), Name(), std::strerror(errno)));
    }
    if (!S_ISCHR(st.st_mode)) {
      return UsageError(
          fmt::format("--source {}: {} is not a character device (a V4L2 "
                      "device is /dev/videoN)",
                      Printable(spec_.text), Name()));
    }
    fd_ = ::open(spec_.path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      const int err = errno;
      if (err == EACCES || err == EPERM) {
        return ResourceError(
            fmt::format("--source {}: cannot open {} ({}); run as root or "
                        "join the video group",
                        Printable(spec_.text), Name(), std::strerror(err)));
      }
      if (err == EBUSY) return Busy("open");
      return ResourceError(fmt::format("--source {}: cannot open {} ({})", Printable(spec_.text),
                                       Name(), std::strerror(err)));
    }
    return Status::Ok();
  }

  Error Busy(std::string_view step) const {
    return ResourceError(fmt::format(
        "--source {}: {} is busy ({} returned EBUSY): another program is capturing from it; "
        "stop it (fuser -v {})",
        Printable(spec_.text), Name(), step, Name()));
  }

  Error IoctlError(std::string_view step) const {
    if (errno == EBUSY) return Busy(step);
    return Failure(fmt::format("--source {}: {} failed on {} ({})", Printable(spec_.text), step,
                               Name(), std::strerror(errno)));
  }

  Status QueryCapabilities() {
    v4l2_capability cap{};
    if (V4l2Ioctl(fd_, VIDIOC_QUERYCAP, &cap) < 0) {
      // ENOSYS: qemu-user's answer for an ioctl it does not translate (the arm64 CI stage's
      // /dev/null); natively a file that is no V4L2 device answers ENOTTY or EINVAL.
      if (errno == ENOTTY || errno == EINVAL || errno == ENOSYS) {
        return UsageError(
            fmt::format("--source {}: {} is not a V4L2 device (VIDIOC_QUERYCAP: "
                        "{})",
                        Printable(spec_.text), Name(), std::strerror(errno)));
      }
      return IoctlError("VIDIOC_QUERYCAP");
    }
    driver_ = Printable(reinterpret_cast<const char*>(cap.driver));
    card_ = Printable(reinterpret_cast<const char*>(cap.card));
    const uint32_t caps =
        (cap.capabilities & V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities;
    if ((caps & V4L2_CAP_VIDEO_CAPTURE) == 0) {
      const bool mplane = (caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0;
      return UsageError(fmt::format(
          "--source {}: {} ({}) is not a single-planar video capture device{}; name the "
          "camera's capture node (v4l2-ctl --list-devices)",
          Printable(spec_.text), Name(), card_,
          mplane ? " (it captures multi-planar only, which rtpulse does not read)" : ""));
    }
    if ((caps & V4L2_CAP_STREAMING) == 0) {
      return UsageError(
          fmt::format("--source {}: {} ({}) does not support streaming I/O, "
                      "which rtpulse needs for driver timestamps",
                      Printable(spec_.text), Name(), card_));
    }
    return Status::Ok();
  }

  Status ChooseFormat() {
    std::vector<uint32_t> offered;
    for (uint32_t index = 0;; ++index) {
      v4l2_fmtdesc desc{};
      desc.index = index;
      desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      if (V4l2Ioctl(fd_, VIDIOC_ENUM_FMT, &desc) < 0) break;
      offered.push_back(desc.pixelformat);
    }
    std::vector<uint32_t> usable;
    for (uint32_t f : offered) {
      if (V4l2FormatSupported(f, false)) usable.push_back(f);
    }
    // JPEG only when nothing raw is offered: its decoder is the OpenCV media module.
    std::string jpeg_why;
    if (usable.empty() && std::any_of(offered.begin(), offered.end(), V4l2IsJpeg)) {
      const auto media = LoadMediaModule();
      if (media) {
        decode_jpeg_ = (*media)->decode_jpeg;
        for (uint32_t f : offered) {
          if (V4l2IsJpeg(f)) usable.push_back(f);
        }
      } else {
        jpeg_why = "; MJPG needs OpenCV: " + media.error().message;
      }
    }
    if (usable.empty()) {
      std::string names;
      for (uint32_t f : offered) names += (names.empty() ? "" : ", ") + V4l2FourccName(f);
      return UsageError(fmt::format(
          "--source {}: {} offers no pixel format rtpulse reads (it offers {}; rtpulse reads "
          "YUYV, BGR3, RGB3 and MJPG{})",
          Printable(spec_.text), Name(), names.empty() ? "none" : names, jpeg_why));
    }
    std::stable_sort(usable.begin(), usable.end(),
                     [](uint32_t a, uint32_t b) { return V4l2FormatRank(a) < V4l2FormatRank(b); });
    v4l2_format fmt{};
    fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (V4l2Ioctl(fd_, VIDIOC_G_FMT, &fmt) < 0) return IoctlError("VIDIOC_G_FMT");
    fmt.fmt.pix.pixelformat = usable.front();
    if (spec_.width > 0 && spec_.height > 0) {
      fmt.fmt.pix.width = static_cast<uint32_t>(spec_.width);
      fmt.fmt.pix.height = static_cast<uint32_t>(spec_.height);
    }
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    fmt.fmt.pix.bytesperline = 0;
    if (V4l2Ioctl(fd_, VIDIOC_S_FMT, &fmt) < 0) return IoctlError("VIDIOC_S_FMT");
    pixel_format_ = fmt.fmt.pix.pixelformat;
    if (!V4l2FormatSupported(pixel_format_, decode_jpeg_ != nullptr)) {
      return UsageError(fmt::format("--source {}: {} was asked for {} and set {}",
                                    Printable(spec_.text), Name(), V4l2FourccName(usable.front()),
                                    V4l2FourccName(pixel_format_)));
    }
    width_ = static_cast<int>(fmt.fmt.pix.width);
    height_ = static_cast<int>(fmt.fmt.pix.height);
    const uint32_t min_stride =
        static_cast<uint32_t>(width_) * (pixel_format_ == V4L2_PIX_FMT_YUYV ? 2 : 3);
    stride_ = std::max(fmt.fmt.pix.bytesperline, min_stride);
    if (width_ <= 0 || height_ <= 0) {
      return Failure(fmt::format("{}: the driver set a {}x{} frame", Name(), width_, height_));
    }
    return Status::Ok();
  }

  Status SetFrameRate() {
    v4l2_streamparm parm{};
    parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (V4l2Ioctl(fd_, VIDIOC_G_PARM, &parm) < 0) return Status::Ok();  // Not every driver.
    if (spec_.fps > 0) {
      if ((parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME) == 0) {
        return UsageError(
            fmt::format("--source {}: {} cannot set its frame rate; leave out "
                        "the fps option",
                        Printable(spec_.text), Name()));
      }
      parm.parm.capture.timeperframe.numerator = 1000;
      parm.parm.capture.timeperframe.denominator =
          static_cast<uint32_t>(std::lround(spec_.fps * 1000));
      if (V4l2Ioctl(fd_, VIDIOC_S_PARM, &parm) < 0) return IoctlError("VIDIOC_S_PARM");
    }
    const v4l2_fract tpf = parm.parm.capture.timeperframe;
    fps_ = tpf.numerator > 0 ? static_cast<double>(tpf.denominator) / tpf.numerator : 0;
    return Status::Ok();
  }

  Status MapBuffers() {
    v4l2_requestbuffers req{};
    req.count = kV4l2Buffers;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    if (V4l2Ioctl(fd_, VIDIOC_REQBUFS, &req) < 0) {
      if (errno == EINVAL) {
        return UsageError(fmt::format("--source {}: {} does not support mmap streaming",
                                      Printable(spec_.text), Name()));
      }
      return IoctlError("VIDIOC_REQBUFS");
    }
    requested_ = true;
    if (req.count < 2) {
      return ResourceError(
          fmt::format("{}: the driver granted {} buffer(s), at least 2 are "
                      "needed",
                      Name(), req.count));
    }
    buffers_.resize(req.count);
    for (uint32_t i = 0; i < req.count; ++i) {
      v4l2_buffer buf{};
      buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buf.memory = V4L2_MEMORY_MMAP;
      buf.index = i;
      if (V4l2Ioctl(fd_, VIDIOC_QUERYBUF, &buf) < 0) return IoctlError("VIDIOC_QUERYBUF");
      if (i == 0) timestamp_source_ = StampOf(buf.flags);
      void* start =
          ::mmap(nullptr, buf.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, buf.m.offset);
      if (start == MAP_FAILED) {
        return ResourceError(
            fmt::format("{}: cannot map buffer {} ({})", Name(), i, std::strerror(errno)));
      }
      buffers_[i] = {start, buf.length};
      if (V4l2Ioctl(fd_, VIDIOC_QBUF, &buf) < 0) return IoctlError("VIDIOC_QBUF");
    }
    return Status::Ok();
  }

  Status StartStreaming() {
    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (V4l2Ioctl(fd_, VIDIOC_STREAMON, &type) < 0) return IoctlError("VIDIOC_STREAMON");
    streaming_ = true;
    return Status::Ok();
  }

  // Timestamps on CLOCK_MONOTONIC are the driver's; any other clock (or a copied stamp) is
  // not comparable with ours, so the read's start stands in and the source says "read".
  static TimestampSource StampOf(uint32_t flags) {
    if ((flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) != V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) {
      return TimestampSource::kRead;
    }
    return (flags & V4L2_BUF_FLAG_TSTAMP_SRC_MASK) == V4L2_BUF_FLAG_TSTAMP_SRC_SOE
               ? TimestampSource::kDriverStartOfExposure
               : TimestampSource::kDriverEndOfFrame;
  }

  // Frames the driver skipped before `sequence` (its counter has a gap).
  uint32_t NoteSequence(uint32_t sequence) {
    uint32_t lost = 0;
    if (have_sequence_ && sequence > last_sequence_ + 1) lost = sequence - last_sequence_ - 1;
    if (!have_sequence_ && sequence > 0) lost = sequence;
    have_sequence_ = true;
    last_sequence_ = sequence;
    return lost;
  }

  Status WaitForFrame() {
    // Ten frame periods, at least two seconds: a camera that stops delivering is an error,
    // not a hang.
    const int timeout_ms = fps_ > 0 ? std::max(2000, static_cast<int>(10'000 / fps_)) : 5000;
    pollfd p{fd_, POLLIN, 0};
    while (true) {
      const int r = ::poll(&p, 1, timeout_ms);
      if (r > 0) {
        if ((p.revents & POLLERR) != 0) {
          return Failure(fmt::format("{}: poll reports an error (device unplugged?)", Name()));
        }
        return Status::Ok();
      }
      if (r == 0) {
        return Failure(fmt::format("{}: no frame within {} ms", Name(), timeout_ms));
      }
      if (errno != EINTR) {
        return Failure(fmt::format("{}: poll failed ({})", Name(), std::strerror(errno)));
      }
    }
  }

  Status Requeue(v4l2_buffer& buf) {
    if (V4l2Ioctl(fd_, VIDIOC_QBUF, &buf) < 0) return IoctlError("VIDIOC_QBUF");
    return Status::Ok();
  }

  Status Convert(const v4l2_buffer& buf, Image& image) {
    const auto* data = static_cast<const uint8_t*>(buffers_[buf.index].start);
    const size_t used = std::min<size_t>(buf.bytesused, buffers_[buf.index].length);
    if (V4l2IsJpeg(pixel_format_)) {
      return DecodeJpeg(data, used, image);
    }
    const size_t needed =
        static_cast<size_t>(stride_) * static_cast<size_t>(height_ - 1) +
        static_cast<size_t>(width_) * (pixel_format_ == V4L2_PIX_FMT_YUYV ? 2 : 3);
    if (used < needed) {
      return Failure(fmt::format("{}: frame {} has {} bytes, a {}x{} {} frame needs {}", Name(),
                                 buf.sequence, used, width_, height_, V4l2FourccName(pixel_format_),
                                 needed));
    }
    image.Reshape(width_, height_);
    uint8_t* out = image.bgr.data();
    const size_t row = static_cast<size_t>(width_) * 3;
    if (pixel_format_ == V4L2_PIX_FMT_YUYV) {
      YuyvToBgr(data, stride_, width_, height_, out);
    } else {
      for (int y = 0; y < height_; ++y) {
        const uint8_t* s = data + static_cast<size_t>(y) * stride_;
        uint8_t* d = out + static_cast<size_t>(y) * row;
        if (pixel_format_ == V4L2_PIX_FMT_BGR24) {
          std::memcpy(d, s, row);
        } else {
          for (int x = 0; x < width_; ++x) {
            d[3 * x] = s[3 * x + 2];
            d[3 * x + 1] = s[3 * x + 1];
            d[3 * x + 2] = s[3 * x];
          }
        }
      }
    }
    return Status::Ok();
  }

  Status DecodeJpeg(const uint8_t* data, size_t size, Image& image) {
    if (decode_jpeg_ == nullptr || !decode_jpeg_(data, size, &image)) {
      return Failure(fmt::format("{}: a frame is not decodable JPEG", Name()));
    }
    return Status::Ok();
  }

  void Close() {
    if (fd_ < 0) return;
    if (streaming_) {
      v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      V4l2Ioctl(fd_, VIDIOC_STREAMOFF, &type);
      streaming_ = false;
    }
    for (V4l2MappedBuffer& b : buffers_) {
      if (b.start != MAP_FAILED) ::munmap(b.start, b.length);
    }
    buffers_.clear();
    if (requested_) {
      v4l2_requestbuffers req{};
      req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      req.memory = V4L2_MEMORY_MMAP;
      V4l2Ioctl(fd_, VIDIOC_REQBUFS, &req);  // count 0: frees the driver's buffers
      requested_ = false;
    }
    ::close(fd_);
    fd_ = -1;
  }

  SourceSpec spec_;
  int fd_ = -1;
  std::string driver_;
  std::string card_;
  uint32_t pixel_format_ = 0;
  int width_ = 0;
  int height_ = 0;
  uint32_t stride_ = 0;
  double fps_ = 0;
  MediaDecodeJpegFn* decode_jpeg_ = nullptr;
  std::vector<V4l2MappedBuffer> buffers_;
  bool requested_ = false;
  bool streaming_ = false;
  TimestampSource timestamp_source_ = TimestampSource::kRead;
  bool have_sequence_ = false;
  uint32_t last_sequence_ = 0;
  uint32_t pending_corrupt_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> MakeV4l2Source(const SourceSpec& spec) {
  return std::make_unique<V4l2Source>(spec);
}

}  // namespace rtpulse::e2e
