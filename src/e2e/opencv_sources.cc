// Video files (OpenCV videoio, FFMPEG backend) and image folders (cv::imread): compiled only
// with RTPULSE_INFERENCE. Both stamp capture at the read's start: a file has no capture time.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "core/clock.h"
#include "core/printable.h"
#include "e2e/sources.h"

namespace rtpulse::e2e {
namespace {

// Copies an 8-bit BGR (or grey / BGRA) Mat into `image`, row by row (a Mat may be padded).
Status CopyMatToImage(const cv::Mat& decoded, Image& image, const std::string& what) {
  const cv::Mat* mat = &decoded;
  cv::Mat converted;
  if (decoded.depth() != CV_8U) {
    return UsageError(fmt::format("{}: {}-bit samples; rtpulse reads 8-bit images", what,
                                  decoded.elemSize1() * 8));
  }
  if (decoded.channels() == 1) {
    cv::cvtColor(decoded, converted, cv::COLOR_GRAY2BGR);
    mat = &converted;
  } else if (decoded.channels() == 4) {
    cv::cvtColor(decoded, converted, cv::COLOR_BGRA2BGR);
    mat = &converted;
  } else if (decoded.channels() != 3) {
    return UsageError(fmt::format("{}: {} channels; rtpulse reads grey, BGR or BGRA images", what,
                                  decoded.channels()));
  }
  image.Reshape(mat->cols, mat->rows);
  const size_t row_bytes = static_cast<size_t>(mat->cols) * 3;
  for (int y = 0; y < mat->rows; ++y) {
    std::memcpy(image.bgr.data() + static_cast<size_t>(y) * row_bytes, mat->ptr(y), row_bytes);
  }
  return Status::Ok();
}

Status CheckFileExists(const std::string& path, const std::string& text, bool folder) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return UsageError(fmt::format("--source {}: {} ({}); give an existing {}", Printable(text),
                                  Printable(path), std::strerror(errno),
                                  folder ? "folder of images" : "video file"));
  }
  if (folder ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    return UsageError(fmt::format("--source {}: {} is not a {}", Printable(text), Printable(path),
                                  folder ? "folder" : "regular file"));
  }
  return Status::Ok();
}

class VideoSource final : public FrameSource {
 public:
  explicit VideoSource(const SourceSpec& spec) : spec_(spec) {}

  // Opens the file and decodes its first frame (kept for the first Read): a file OpenCV
  // opens but cannot decode fails here, not mid-run.
  Status Open() override {
    if (Status s = CheckFileExists(spec_.path, spec_.text, false); !s) return s;
    if (!OpenCapture()) {
      return UsageError(fmt::format(
          "--source {}: {} is not a video OpenCV's FFMPEG backend can open; give a video file "
          "(e.g. .mp4, .avi, .mkv)",
          Printable(spec_.text), Printable(spec_.path)));
    }
    cv::Mat first;
    if (!capture_.read(first) || first.empty()) {
      return UsageError(
          fmt::format("--source {}: {} has no frame OpenCV's FFMPEG backend can "
                      "decode",
                      Printable(spec_.text), Printable(spec_.path)));
    }
    if (Status s = CopyMatToImage(first, first_, spec_.path); !s) return s;
    fps_ = capture_.get(cv::CAP_PROP_FPS);
    header_frames_ = capture_.get(cv::CAP_PROP_FRAME_COUNT);
    have_first_ = true;
    return Status::Ok();
  }

  Expected<bool> Read(CapturedFrame& frame) override {
    frame.read_start_ns = MonotonicNs();
    if (have_first_) {
      have_first_ = false;
      frame.image.Reshape(first_.width, first_.height);
      std::copy(first_.bgr.begin(), first_.bgr.end(), frame.image.bgr.begin());
    } else if (!capture_.read(mat_) || mat_.empty()) {
      if (!spec_.loop) return false;
      // Rewinding by reopening: FFMPEG's seek to frame 0 is not exact for every codec.
      capture_.release();
      if (!OpenCapture() || !capture_.read(mat_) || mat_.empty()) {
        return Failure(fmt::format("--source {}: cannot read {} again from its start",
                                   Printable(spec_.text), Printable(spec_.path)));
      }
      ++loops_;
    }
    if (mat_.cols != 0 && (mat_.cols != first_.width || mat_.rows != first_.height)) {
      return Failure(fmt::format("--source {}: frame {} is {}x{}, the first was {}x{}",
                                 Printable(spec_.text), next_seq_, mat_.cols, mat_.rows,
                                 first_.width, first_.height));
    }
    if (!mat_.empty()) {
      if (Status s = CopyMatToImage(mat_, frame.image, spec_.path); !s) return s.error();
      mat_.release();
    }
    frame.seq = next_seq_++;
    frame.capture_ns = frame.read_start_ns;
    frame.lost_before = 0;
    frame.read_end_ns = MonotonicNs();
    return true;
  }

  TimestampSource timestamp_source() const override { return TimestampSource::kRead; }

  std::string Describe() const override {
    return fmt::format("video {} ({}x{}, {:.3g} fps, {} frames by its header, OpenCV FFMPEG{})",
                       SourceBaseName(spec_.path), first_.width, first_.height, fps_,
                       static_cast<int64_t>(header_frames_), spec_.loop ? ", looped" : "");
  }

 private:
  bool OpenCapture() { return capture_.open(spec_.path, cv::CAP_FFMPEG) && capture_.isOpened(); }

  SourceSpec spec_;
  cv::VideoCapture capture_;
  cv::Mat mat_;
  Image first_;
  bool have_first_ = false;
  double fps_ = 0;
  double header_frames_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t loops_ = 0;
};

bool IsImageName(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return false;
  std::string ext = name.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "bmp" || ext == "ppm";
}

class ImagesSource final : public FrameSource {
 public:
  explicit ImagesSource(const SourceSpec& spec) : spec_(spec) {}

  // Lists the folder and decodes every image once, so an undecodable file or one of another
  // size fails here, naming it, instead of mid-run.
  Status Open() override {
    if (Status s = CheckFileExists(spec_.path, spec_.text, true); !s) return s;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(spec_.path, ec)) {
      if (entry.is_regular_file(ec) && IsImageName(entry.path().filename().string())) {
        files_.push_back(entry.path().string());
      }
    }
    if (ec) {
      return UsageError(fmt::format("--source {}: cannot list {} ({})", Printable(spec_.text),
                                    Printable(spec_.path), ec.message()));
    }
    if (files_.empty()) {
      return UsageError(fmt::format("--source {}: no images (.png, .jpg, .jpeg, .bmp, .ppm) in {}",
                                    Printable(spec_.text), Printable(spec_.path)));
    }
    std::sort(files_.begin(), files_.end());
    Image image;
    for (const std::string& file : files_) {
      if (Status s = Decode(file, image); !s) return s;
      if (width_ == 0) {
        width_ = image.width;
        height_ = image.height;
      } else if (image.width != width_ || image.height != height_) {
        return UsageError(fmt::format(
            "--source {}: {} is {}x{}, but {} is {}x{}; every image of the folder must have one "
            "size",
            Printable(spec_.text), Printable(file), image.width, image.height,
            Printable(files_.front()), width_, height_));
      }
    }
    return Status::Ok();
  }

  Expected<bool> Read(CapturedFrame& frame) override {
    frame.read_start_ns = MonotonicNs();
    if (next_ == files_.size()) {
      if (!spec_.loop) return false;
      next_ = 0;
    }
    if (Status s = Decode(files_[next_], frame.image); !s) return Failure(s.error().message);
    if (frame.image.width != width_ || frame.image.height != height_) {
      return Failure(fmt::format("--source {}: {} changed size during the run",
                                 Printable(spec_.text), Printable(files_[next_])));
    }
    ++next_;
    frame.seq = seq_++;
    frame.capture_ns = frame.read_start_ns;
    frame.lost_before = 0;
    frame.read_end_ns = MonotonicNs();
    return true;
  }

  TimestampSource timestamp_source() const override { return TimestampSource::kRead; }

  std::string Describe() const override {
    return fmt::format("images {} ({} files, {}x{}, cv::imread{})", SourceBaseName(spec_.path),
                       files_.size(), width_, height_, spec_.loop ? ", looped" : "");
  }

 private:
  Status Decode(const std::string& file, Image& image) {
    mat_ = cv::imread(file, cv::IMREAD_UNCHANGED);
    if (mat_.empty()) {
      return UsageError(fmt::format("--source {}: {} is not an image cv::imread can decode",
                                    Printable(spec_.text), Printable(file)));
    }
    if (mat_.depth() == CV_16U) mat_.convertTo(mat_, CV_8U, 1.0 / 257);
    return CopyMatToImage(mat_, image, file);
  }

  SourceSpec spec_;
  std::vector<std::string> files_;
  cv::Mat mat_;
  size_t next_ = 0;
  uint64_t seq_ = 0;
  int width_ = 0;
  int height_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> MakeVideoSource(const SourceSpec& spec) {
  return std::make_unique<VideoSource>(spec);
}

std::unique_ptr<FrameSource> MakeImagesSource(const SourceSpec& spec) {
  return std::make_unique<ImagesSource>(spec);
}

}  // namespace rtpulse::e2e
