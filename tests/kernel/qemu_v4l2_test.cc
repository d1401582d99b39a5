// Assertions on the QEMU guest's V4L2 check (tests/kernel/qemu/guest.d/v4l2.sh): `rtpulse e2e`
// reading vivid, the kernel's V4L2 test driver, through the V4L2 source's own mmap streaming
// (src/e2e/v4l2_source.cc), with the tiny generated model. The fixture kernel_qemu_boot boots
// the guest; this reads its console.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "guest_console.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using guest::Console;

std::string Value(const std::string& key) {
  auto it = Console().values.find(key);
  return it == Console().values.end() ? "<absent>" : it->second;
}

std::string Section(const std::string& key) {
  auto it = Console().sections.find(key);
  return it == Console().sections.end() ? "" : it->second;
}

// frames.csv as columns by name ("capture_ns" is also found as "capture").
struct FramesCsv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int Column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name || header[i] + "_ns" == name) return static_cast<int>(i);
    }
    return -1;
  }
  int64_t At(size_t row, int column) const {
    return std::stoll(rows[row][static_cast<size_t>(column)]);
  }
};

FramesCsv ParseFrames(const std::string& text) {
  FramesCsv csv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) fields.push_back(cell);
    if (csv.header.empty()) {
      csv.header = fields;
    } else {
      csv.rows.push_back(fields);
    }
  }
  return csv;
}

// Every string value anywhere under `j`.
void CollectStrings(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_string()) out.push_back(j.get<std::string>());
  if (j.is_object() || j.is_array()) {
    for (const auto& item : j) CollectStrings(item, out);
  }
}

class QemuV4l2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Console().loaded) << "no " << RTPULSE_QEMU_DIR
                                  << "/console.log: run through ctest, whose fixture "
                                     "kernel_qemu_boot boots the guest (ctest -R kernel_qemu)";
    ASSERT_EQ(Console().values.count("done"), 1u) << "the guest did not reach its end";
    ASSERT_NE(Value("guest.d-exit v4l2"), "<absent>") << "guest.d/v4l2.sh did not run";
  }
};

TEST_F(QemuV4l2Test, TheGuestHasVividsCaptureDevice) {
  EXPECT_NE(Value("v4l2 devices").find("/dev/video0"), std::string::npos) << Value("v4l2 devices");
  EXPECT_EQ(Value("v4l2 driver"), "vivid");
  EXPECT_NE(Value("v4l2 name").find("vid-cap"), std::string::npos) << Value("v4l2 name");
}

TEST_F(QemuV4l2Test, E2eFromTheCameraExitsZero) {
  EXPECT_EQ(Value("v4l2 exit"), "0") << Section("v4l2 run");
  EXPECT_EQ(Value("guest.d-exit v4l2"), "0");
}

TEST_F(QemuV4l2Test, TheSourceBlockNamesTheDriversTimestamp) {
  const std::string text = Section("v4l2 e2e.json");
  ASSERT_FALSE(text.empty()) << Section("v4l2 run");
  const auto j = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << text;
  ASSERT_TRUE(j.contains("source")) << text;
  std::vector<std::string> strings;
  CollectStrings(j["source"], strings);
  const bool driver = std::any_of(strings.begin(), strings.end(), [](const std::string& s) {
    return s == "driver-eof" || s == "driver-soe";
  });
  EXPECT_TRUE(driver) << "no driver-eof / driver-soe in " << j["source"].dump();
}

TEST_F(QemuV4l2Test, FramesCarryDriverTimestampsInOrder) {
  const FramesCsv csv = ParseFrames(Section("v4l2 frames.csv"));
  ASSERT_GE(csv.rows.size(), 20u) << Section("v4l2 frames.csv") << Section("v4l2 run");
  const int capture = csv.Column("capture_ns");
  const int read_end = csv.Column("read_end_ns");
  const int alert = csv.Column("alert_ns");
  const int seq = csv.Column("source_seq");
  ASSERT_GE(capture, 0) << "no capture_ns column";
  ASSERT_GE(read_end, 0) << "no read_end_ns column";
  const bool soe = Section("v4l2 e2e.json").find("driver-soe") != std::string::npos;
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < csv.rows.size(); ++i) {
    gaps.push_back(csv.At(i, capture) - csv.At(i - 1, capture));
    EXPECT_GT(gaps.back(), 0) << "frame " << i << ": driver stamps must increase";
    if (seq >= 0) {
      EXPECT_GT(csv.At(i, seq), csv.At(i - 1, seq)) << "frame " << i;
    }
  }
  std::sort(gaps.begin(), gaps.end());
  const int64_t period_ns = gaps[gaps.size() / 2];
  ASSERT_GT(period_ns, 0);
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    const int64_t c = csv.At(i, capture);
    const int64_t r = csv.At(i, read_end);
    // A driver stamp on our CLOCK_MONOTONIC, not 0 nor the read's time in disguise: within a
    // few seconds before the read (4 buffers queued at most).
    EXPECT_GT(c, r - 10'000'000'000) << "frame " << i;
    if (soe) {
      EXPECT_LE(c, r) << "frame " << i << ": start of exposure after the read ended";
    } else {
      // vivid stamps "end of frame" as the moment it fills the buffer plus 0.9 frame periods
      // (vivid-kthread-cap.c, cap_frame_eof_offset), and hands the buffer over at once: its
      // stamp lies up to 0.9 periods after our read. Past that it would be wrong.
      EXPECT_LE(c - period_ns * 9 / 10, r + period_ns / 20)
          << "frame " << i << ": stamp " << c << ", read end " << r << ", period " << period_ns;
    }
    if (alert >= 0) {
      EXPECT_LE(r, csv.At(i, alert)) << "frame " << i;
    }
  }
}

TEST_F(QemuV4l2Test, AnOutputNodeAndAMissingNodeAreUsageErrors) {
  EXPECT_EQ(Value("v4l2 output-node exit"), "2") << Section("v4l2 output-node");
  EXPECT_NE(Section("v4l2 output-node").find("/dev/video1"), std::string::npos)
      << Section("v4l2 output-node");
  EXPECT_NE(Section("v4l2 output-node").find("not a single-planar video capture device"),
            std::string::npos)
      << Section("v4l2 output-node");
  EXPECT_EQ(Value("v4l2 missing exit"), "2") << Section("v4l2 missing");
  EXPECT_NE(Section("v4l2 missing").find("/dev/video99 does not exist"), std::string::npos)
      << Section("v4l2 missing");
}

TEST_F(QemuV4l2Test, ASecondCaptureWhileOneStreamsIsBusy) {
  // The first run's scenario streams (its result.json says "measuring" and its fd is open)
  // before the second starts, so the second's own check meets the busy device.
  ASSERT_EQ(Value("v4l2 holder streaming"), "yes");
  EXPECT_EQ(Value("v4l2 busy exit"), "3") << Section("v4l2 busy");
  EXPECT_NE(Section("v4l2 busy").find("/dev/video0 is busy"), std::string::npos)
      << Section("v4l2 busy");
  EXPECT_EQ(Value("v4l2 holder exit"), "0") << "the first capture must be unharmed";
}

}  // namespace
}  // namespace rtpulse
