// Video files and image folders (OpenCV builds): real files made here with ffmpeg and
// python3-opencv, read back through the sources and compared byte for byte with an
// independent decode (Python's cv2, ffmpeg's own raw output) or the pattern that wrote them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "e2e/frame_source.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::e2e {
namespace {

const std::string kTruth = std::string(RTPULSE_SOURCE_DIR) + "/tests/e2e/source_truth.py";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void Ffmpeg(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      "/usr/bin/ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=10",
      "-frames:v",       "30"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto run = testutil::RunProcess(argv);
  ASSERT_EQ(run.exit_code, 0) << run.err;
}

Expected<std::unique_ptr<FrameSource>> Open(const std::string& text) {
  auto spec = ParseSourceSpec(text);
  if (!spec) return spec.error();
  auto source = MakeSource(*spec);
  if (!source) return source.error();
  if (Status s = (*source)->Open(); !s) return s.error();
  return std::move(*source);
}

// Every frame until the source ends (at most `limit`), concatenated.
std::string ReadAll(FrameSource& source, int& frames, size_t limit = 1000) {
  std::string bytes;
  CapturedFrame frame;
  frames = 0;
  while (static_cast<size_t>(frames) < limit) {
    const auto more = source.Read(frame);
    EXPECT_TRUE(more);
    if (!more || !*more) break;
    EXPECT_EQ(frame.seq, static_cast<uint64_t>(frames));
    EXPECT_EQ(frame.image.width, 320);
    EXPECT_EQ(frame.image.height, 240);
    EXPECT_EQ(frame.capture_ns, frame.read_start_ns);
    EXPECT_LE(frame.read_start_ns, frame.read_end_ns);
    bytes.append(reinterpret_cast<const char*>(frame.image.bgr.data()), frame.image.bgr.size());
    ++frames;
  }
  return bytes;
}

TEST(VideoSourceTest, Mpeg4FramesEqualPythonCv2Decode) {
  testutil::TempDir dir;
  Ffmpeg({"-c:v", "mpeg4", "-q:v", "3", dir.File("clip.mp4")});
  const auto py = testutil::RunProcess(
      {"/usr/bin/python3", kTruth, "decode", dir.File("clip.mp4"), dir.File("cv2.raw")});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out, "frames 30 320 240\n");
  auto source = Open("video:" + dir.File("clip.mp4"));
  ASSERT_TRUE(source) << source.error().message;
  EXPECT_EQ((*source)->timestamp_source(), TimestampSource::kRead);
  EXPECT_TRUE(Contains((*source)->Describe(), "video clip.mp4 (320x240, 10 fps, 30 frames"))
      << (*source)->Describe();
  int frames = 0;
  const std::string bytes = ReadAll(**source, frames);
  EXPECT_EQ(frames, 30);
  EXPECT_TRUE(bytes == testutil::ReadFile(dir.File("cv2.raw"))) << "pixels differ from cv2's";
  CapturedFrame frame;
  EXPECT_FALSE(*(*source)->Read(frame)) << "still at the end";
  // Decoded by the media module, loaded now (frame_source_test: not before).
  EXPECT_TRUE(Contains(testutil::ReadFile("/proc/self/maps"), "librtpulse_e2e_media.so"));
}

TEST(VideoSourceTest, LosslessFramesEqualFfmpegsOwnRawOutput) {
  testutil::TempDir dir;
  Ffmpeg({"-c:v", "rawvideo", "-pix_fmt", "bgr24", dir.File("clip.avi")});
  Ffmpeg({"-f", "rawvideo", "-pix_fmt", "bgr24", dir.File("truth.raw")});
  auto source = Open("video:" + dir.File("clip.avi"));
  ASSERT_TRUE(source) << source.error().message;
  int frames = 0;
  const std::string bytes = ReadAll(**source, frames);
  EXPECT_EQ(frames, 30);
  const std::string truth = testutil::ReadFile(dir.File("truth.raw"));
  ASSERT_EQ(truth.size(), 30u * 320 * 240 * 3);
  EXPECT_TRUE(bytes == truth) << "pixels differ from ffmpeg's testsrc2";
}

TEST(VideoSourceTest, LoopRewindsToTheFirstFrame) {
  testutil::TempDir dir;
  Ffmpeg({"-c:v", "rawvideo", "-pix_fmt", "bgr24", dir.File("clip.avi")});
  auto source = Open("video:" + dir.File("clip.avi") + ",loop");
  ASSERT_TRUE(source) << source.error().message;
  EXPECT_TRUE(Contains((*source)->Describe(), "looped"));
  int frames = 0;
  const std::string bytes = ReadAll(**source, frames, 75);
  ASSERT_EQ(frames, 75);
  const size_t frame_bytes = 320 * 240 * 3;
  EXPECT_TRUE(bytes.substr(30 * frame_bytes, 30 * frame_bytes) ==
              bytes.substr(0, 30 * frame_bytes));
  EXPECT_TRUE(bytes.substr(60 * frame_bytes) == bytes.substr(0, 15 * frame_bytes));
}

TEST(VideoSourceTest, MissingFolderAndNonVideoAreUsageErrorsNamingThePath) {
  testutil::TempDir dir;
  std::ofstream(dir.File("notes.mp4")) << "this is text, not a video\n";
  for (const std::string& path : {dir.File("none.mp4"), dir.path(), dir.File("notes.mp4")}) {
    auto source = Open("video:" + path);
    ASSERT_FALSE(source) << path;
    EXPECT_EQ(source.error().code, ExitCode::kUsage) << source.error().message;
    EXPECT_TRUE(Contains(source.error().message, path)) << source.error().message;
  }
}

std::vector<uint8_t> Pattern(int i, int w, int h) {
  std::vector<uint8_t> bgr(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p =
          &bgr[(static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3];
      p[0] = static_cast<uint8_t>((x * 3 + y * 5 + i * 7) % 256);
      p[1] = static_cast<uint8_t>((x * y + i * 11) % 256);
      p[2] = static_cast<uint8_t>((x + 2 * y + i * 13) % 256);
    }
  }
  return bgr;
}

void WriteImages(const std::string& folder, int n, int w, int h) {
  const auto run = testutil::RunProcess({"/usr/bin/python3", kTruth, "write-images", folder,
                                         std::to_string(n), std::to_string(w), std::to_string(h)});
  ASSERT_EQ(run.exit_code, 0) << run.err;
}

TEST(ImagesSourceTest, PngFolderReadsBackPixelExactInNameOrder) {
  testutil::TempDir dir;
  WriteImages(dir.path(), 5, 97, 61);
  std::ofstream(dir.File("README.txt")) << "not an image, ignored\n";
  auto source = Open("images:" + dir.path());
  ASSERT_TRUE(source) << source.error().message;
  EXPECT_TRUE(Contains((*source)->Describe(), "5 files, 97x61")) << (*source)->Describe();
  CapturedFrame frame;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(*(*source)->Read(frame));
    EXPECT_EQ(frame.seq, static_cast<uint64_t>(i));
    ASSERT_EQ(frame.image.width, 97);
    ASSERT_EQ(frame.image.height, 61);
    EXPECT_TRUE(frame.image.bgr == Pattern(i, 97, 61)) << "image " << i;
  }
  EXPECT_FALSE(*(*source)->Read(frame));
}

TEST(ImagesSourceTest, LoopStartsAgain) {
  testutil::TempDir dir;
  WriteImages(dir.path(), 3, 32, 24);
  auto source = Open("images:" + dir.path() + ",loop");
  ASSERT_TRUE(source) << source.error().message;
  CapturedFrame frame;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(*(*source)->Read(frame));
    EXPECT_EQ(frame.seq, static_cast<uint64_t>(i));
    EXPECT_TRUE(frame.image.bgr == Pattern(i % 3, 32, 24)) << "read " << i;
  }
}

TEST(ImagesSourceTest, MixedSizesEmptyMissingAndUndecodableAreUsageErrors) {
  testutil::TempDir mixed;
  WriteImages(mixed.path(), 2, 32, 24);
  testutil::TempDir other;
  WriteImages(other.path(), 1, 40, 24);
  std::rename(other.File("frame_000.png").c_str(), mixed.File("frame_001b.png").c_str());
  auto source = Open("images:" + mixed.path());
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code, ExitCode::kUsage);
  EXPECT_TRUE(Contains(source.error().message, "frame_001b.png is 40x24"))
      << source.error().message;
  EXPECT_TRUE(Contains(source.error().message, "32x24")) << source.error().message;

  testutil::TempDir empty;
  std::ofstream(empty.File("notes.txt")) << "x";
  source = Open("images:" + empty.path());
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code, ExitCode::kUsage);
  EXPECT_TRUE(Contains(source.error().message, "no images")) << source.error().message;

  source = Open("images:" + empty.File("none"));
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code, ExitCode::kUsage);
  EXPECT_TRUE(Contains(source.error().message, empty.File("none"))) << source.error().message;

  source = Open("images:" + empty.File("notes.txt"));
  ASSERT_FALSE(source);
  EXPECT_TRUE(Contains(source.error().message, "not a folder")) << source.error().message;

  std::ofstream(empty.File("broken.png")) << "not a png";
  source = Open("images:" + empty.path());
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code, ExitCode::kUsage);
  EXPECT_TRUE(Contains(source.error().message, "broken.png")) << source.error().message;
}

}  // namespace
}  // namespace rtpulse::e2e
