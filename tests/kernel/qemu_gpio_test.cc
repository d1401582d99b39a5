// Assertions on the GPIO part of the QEMU proof guest (tests/kernel/qemu/guest.d/gpio.sh, run
// by the guest's /init): a real GPIO character device (gpio-sim) driven and read by rtpulse,
// its edges made through the simulator's pull attribute and timestamped by the kernel. Every
// number rtpulse prints is compared with the raw data the guest printed beside it: the
// per-sample log (kernel edge timestamp and thread-running time of every sample) and the
// levels the shell "wire" read back through the simulator's sysfs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "guest_console.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using guest::Console;

std::string GuestValue(const std::string& key) {
  auto it = Console().values.find(key);
  return it == Console().values.end() ? "<absent>" : it->second;
}

std::string GuestSection(const std::string& key) {
  auto it = Console().sections.find(key);
  return it == Console().sections.end() ? "" : it->second;
}

nlohmann::json GuestJson(const std::string& key) {
  const std::string text = GuestSection(key);
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << key << " is not JSON (" << e.what() << "):\n" << text;
    return {};
  }
}

/// A CSV section as rows of named fields (the first line is the header).
std::vector<std::map<std::string, std::string>> GuestCsv(const std::string& key) {
  std::istringstream in(GuestSection(key));
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) fields.push_back(cell);
    if (header.empty()) {
      header = fields;
      continue;
    }
    if (fields.size() != header.size()) continue;  // a repeated header or a stray line
    if (fields == header) continue;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

/// "<uptime> <level>" lines of the wire's log: the levels it read back, in order. The first
/// is the level before any change; gpio-sim puts a released line back to its pull (low), so
/// one last change to 0 may follow rtpulse's own.
std::vector<int> WireLevels(const std::string& key) {
  std::istringstream in(GuestSection(key));
  std::vector<int> levels;
  std::string uptime;
  int level = 0;
  while (in >> uptime >> level) levels.push_back(level);
  return levels;
}

class QemuGpioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Console().loaded)
        << "no " << RTPULSE_QEMU_DIR
        << "/console.log: run through ctest, whose fixture kernel_qemu_boot builds and boots "
           "the guest (ctest -R kernel_qemu)";
    ASSERT_EQ(GuestValue("guest.d-exit gpio"), "0") << "guest.d/gpio.sh did not finish:\n"
                                                    << Console().raw;
    ASSERT_EQ(GuestValue("gpio-setup"), "ok") << Console().raw;
  }
};

TEST_F(QemuGpioTest, GpioSimChipIsTheGuestsGpioChip) {
  EXPECT_EQ(GuestValue("gpio-chip").rfind("gpiochip", 0), 0u) << GuestValue("gpio-chip");
  EXPECT_EQ(GuestValue("gpio-label"), "rtpulse-sim");
}

TEST_F(QemuGpioTest, WakeGpioSamplesEveryEdgeFromItsKernelTimestamp) {
  ASSERT_EQ(GuestValue("gpio-wake-exit"), "0") << GuestSection("gpio-wake");
  const auto rows = GuestCsv("gpio-wake.csv");
  // The shell toggled the pull every 20 ms for the 3 s run: tens of edges, at most one per
  // toggle (151 in 3 s).
  ASSERT_GT(rows.size(), 10u) << GuestSection("gpio-wake.csv");
  EXPECT_LE(rows.size(), 160u);
  int64_t min_ns = INT64_MAX;
  int64_t max_ns = INT64_MIN;
  int64_t previous_edge = 0;
  for (const auto& row : rows) {
    const int64_t edge = std::stoll(row.at("expected_ns"));
    const int64_t running = std::stoll(row.at("actual_ns"));
    const int64_t latency = std::stoll(row.at("latency_ns"));
    EXPECT_EQ(row.at("wake"), "gpio");
    EXPECT_EQ(latency, running - edge);
    // The kernel stamped the edge in the interrupt, before the thread ran.
    EXPECT_GE(latency, 0) << "edge at " << edge << " after the thread ran at " << running;
    EXPECT_GT(edge, previous_edge) << "edge timestamps out of order";
    previous_edge = edge;
    min_ns = std::min(min_ns, latency);
    max_ns = std::max(max_ns, latency);
  }
  const nlohmann::json json = GuestJson("gpio-wake.json");
  ASSERT_TRUE(json.contains("rtpulse")) << json.dump();
  const auto& path = json["rtpulse"]["paths"][0];
  EXPECT_EQ(path["wake"], "gpio");
  const auto& all = path["all_threads"];
  EXPECT_EQ(all["count"].get<uint64_t>(), rows.size());
  EXPECT_EQ(all["min_ns"].get<int64_t>(), min_ns);
  EXPECT_EQ(all["max_ns"].get<int64_t>(), max_ns);
  EXPECT_EQ(all["negative_latencies"].get<uint64_t>(), 0u);
  // External edges: no period grid, so nothing is counted as missed.
  EXPECT_EQ(all["missed_activations"].get<uint64_t>(), 0u);
  EXPECT_EQ(json["thread"]["0"]["cycles"].get<uint64_t>(), rows.size());
}

TEST_F(QemuGpioTest, WakeDriveEdgesSeenMatchTheEdgesTheWireMade) {
  ASSERT_EQ(GuestValue("gpio-drive-exit"), "0") << GuestSection("gpio-drive");
  const nlohmann::json json = GuestJson("gpio-drive.json");
  ASSERT_TRUE(json.contains("rtpulse")) << json.dump();
  // rtpulse's own account: "gpio: N edges driven, M seen".
  uint64_t driven = 0;
  uint64_t seen = 0;
  bool found = false;
  const std::regex note(R"(gpio: (\d+) edges driven, (\d+) seen)");
  const auto& thread = json["thread"]["0"];
  // The probe's notes (and the run's warnings too when edges went missing).
  for (const auto& w : thread.value("notes", nlohmann::json::array())) {
    std::smatch m;
    const std::string text = w.get<std::string>();
    if (std::regex_search(text, m, note)) {
      driven = std::stoull(m[1]);
      seen = std::stoull(m[2]);
      found = true;
    }
  }
  ASSERT_TRUE(found) << "no 'edges driven' note in the thread's notes:\n" << json.dump(2);
  const uint64_t cycles = thread["cycles"].get<uint64_t>();
  EXPECT_EQ(seen, cycles);
  // 100 ms interval, 3 s run, last toggle one interval before the end: about 29 toggles.
  EXPECT_GE(driven, 20u);
  EXPECT_LE(driven, 30u);
  // The wire's log: the drive line's level as read back through the simulator, first the
  // level before the run (low), then one line per change it copied to the input's pull.
  const auto levels = WireLevels("gpio-drive-levels");
  ASSERT_FALSE(levels.empty()) << GuestSection("gpio-drive-levels");
  EXPECT_EQ(levels.front(), 0);
  const uint64_t wire_edges = levels.size() - 1;
  // A shell loop under TCG can miss a quick pair of toggles, never invent one; every edge it
  // made on the input while rtpulse ran reached the probe (the last toggle was an interval
  // before the end). The only change after them is the release back to the pull (low).
  ASSERT_GE(wire_edges, seen);
  EXPECT_LE(wire_edges, seen + 1) << GuestSection("gpio-drive-levels");
  if (wire_edges == seen + 1) {
    EXPECT_EQ(levels.back(), 0) << "not the release to the pull";
  }
  EXPECT_LE(seen, driven);
  EXPECT_EQ(json["rtpulse"]["degraded"].get<bool>(), seen < driven);
  // The line read back after the last edge rtpulse saw equals what rtpulse set last: high
  // after an odd number of toggles from low.
  EXPECT_EQ(levels[seen], static_cast<int>(driven % 2)) << GuestSection("gpio-drive-levels");
  EXPECT_EQ(json["rtpulse"]["paths"][0]["all_threads"]["negative_latencies"].get<uint64_t>(), 0u);
}

TEST_F(QemuGpioTest, AMissingLineIsAUsageErrorNamingTheChipsLines) {
  EXPECT_EQ(GuestValue("gpio-error-noline-exit"), "2");
  EXPECT_EQ(GuestValue("gpio-error-noname-exit"), "2");
  const std::string text = GuestSection("gpio-errors");
  EXPECT_NE(text.find("line 9 does not exist"), std::string::npos) << text;
  EXPECT_NE(text.find("has 4 lines, 0..3"), std::string::npos) << text;
  EXPECT_NE(text.find("no line named 'nosuch'; names there: alert, wake, loop, drive"),
            std::string::npos)
      << text;
}

TEST_F(QemuGpioTest, ALineInUseIsAResourceErrorNamingItsConsumer) {
  EXPECT_EQ(GuestValue("gpio-error-busy-exit"), "3");
  const std::string text = GuestSection("gpio-errors");
  EXPECT_NE(text.find("line 1 'wake' of /dev/gpiochip0 (rtpulse-sim) is in use by "
                      "'rtpulse-latency'"),
            std::string::npos)
      << text;
}

TEST_F(QemuGpioTest, E2eAlertLineReadsBackTheLastDecisionAndLoopbackEdgesFollowIt) {
  if (GuestValue("gpio-e2e") != "available") {
    GTEST_SKIP() << "the guest's rtpulse has no e2e command or no /models/depth-tiny.onnx "
                    "(gpio-e2e: "
                 << GuestValue("gpio-e2e") << ")";
  }
  ASSERT_EQ(GuestValue("gpio-e2e-exit"), "0") << GuestSection("gpio-e2e");
  const auto frames = GuestCsv("gpio-e2e-frames.csv");
  ASSERT_FALSE(frames.empty()) << GuestSection("gpio-e2e-frames.csv");
  for (const char* column : {"obstacle", "changed", "post_end_ns", "edge_ns", "release_ns"}) {
    ASSERT_TRUE(frames.front().count(column) == 1) << "frames.csv has no column " << column;
  }
  const auto levels = WireLevels("gpio-e2e-levels");
  ASSERT_FALSE(levels.empty()) << GuestSection("gpio-e2e-levels");
  uint64_t changes = 0;
  uint64_t edges = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    if (f.at("changed") != "1") continue;
    ++changes;
    const int64_t edge = std::stoll(f.at("edge_ns"));
    if (edge < 0) continue;  // timed out: counted by rtpulse, no timestamp invented
    ++edges;
    EXPECT_GE(edge, std::stoll(f.at("post_end_ns"))) << "frame " << i << ": edge before decision";
    if (i + 1 < frames.size()) {
      EXPECT_LT(edge, std::stoll(frames[i + 1].at("release_ns")))
          << "frame " << i << ": edge after the next frame";
    }
  }
  ASSERT_GT(changes, 0u) << "the decision never changed in 100 synthetic frames with --near 17 "
                            "--clear 18 (guest.d/gpio.sh): nothing was driven to check";
  // Every change the wire copied while e2e ran is an edge the loopback saw; the release back
  // to the pull (low) may follow.
  const uint64_t wire_edges = levels.size() - 1;
  ASSERT_GE(wire_edges, edges);
  EXPECT_LE(wire_edges, edges + 1) << GuestSection("gpio-e2e-levels");
  EXPECT_LE(edges, changes);
  // The alert line, read back through the simulator, ends where rtpulse set it last.
  if (edges == changes) {
    EXPECT_EQ(levels[edges], std::stoi(frames.back().at("obstacle")))
        << GuestSection("gpio-e2e-levels");
  }
}

}  // namespace
}  // namespace rtpulse
