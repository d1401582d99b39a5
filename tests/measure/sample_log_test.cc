#include "measure/sample_log.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/cpus.h"

namespace rtpulse::measure {
namespace {

namespace fs = std::filesystem;

// Every field derives from (seq, thread), so a torn or misplaced record is detectable.
SampleRecord MakeRecord(uint64_t seq, uint16_t thread = 0) {
  SampleRecord r{};
  r.seq = seq;
  r.expected_ns = 1'000'000'000 + static_cast<int64_t>(seq) * 1'000'000;
  r.actual_ns = r.expected_ns + static_cast<int64_t>(seq % 97) * 10 - 300;  // some negative
  r.thread = thread;
  r.cpu = thread == 1 ? uint16_t{0xFFFF} : static_cast<uint16_t>(thread + 2);
  r.wake_path = static_cast<uint8_t>(seq % 9);
  r.flags = seq % 13 == 0 ? SampleRecord::kMissed : uint8_t{0};
  r.reserved = 0;
  return r;
}

void ExpectSameRecord(const SampleRecord& got, const SampleRecord& want) {
  EXPECT_EQ(got.seq, want.seq);
  EXPECT_EQ(got.expected_ns, want.expected_ns);
  EXPECT_EQ(got.actual_ns, want.actual_ns);
  EXPECT_EQ(got.thread, want.thread);
  EXPECT_EQ(got.cpu, want.cpu);
  EXPECT_EQ(got.wake_path, want.wake_path);
  EXPECT_EQ(got.flags, want.flags);
  EXPECT_EQ(got.reserved, want.reserved);
}

bool SameRecord(const SampleRecord& a, const SampleRecord& b) {
  return std::memcmp(&a, &b, sizeof(SampleRecord)) == 0;
}

std::vector<SampleRecord> DrainAll(SampleRing& ring) {
  std::vector<SampleRecord> out;
  SampleRecord buffer[7];  // odd size: exercises partial batches
  while (const size_t n = ring.Drain(buffer, std::size(buffer))) {
    out.insert(out.end(), buffer, buffer + n);
  }
  return out;
}

// ---- SampleRing -------------------------------------------------------------------------

TEST(SampleRingTest, CapacityRoundsUpToPowerOfTwo) {
  EXPECT_EQ(SampleRing(0).capacity(), 1u);
  EXPECT_EQ(SampleRing(1).capacity(), 1u);
  EXPECT_EQ(SampleRing(5).capacity(), 8u);
  EXPECT_EQ(SampleRing(8).capacity(), 8u);
  EXPECT_EQ(SampleRing(1000).capacity(), 1024u);
}

TEST(SampleRingTest, EmptyRingDrainsNothing) {
  SampleRing ring(4);
  SampleRecord out[4];
  EXPECT_EQ(ring.Drain(out, 4), 0u);
  ASSERT_TRUE(ring.Push(MakeRecord(0)));
  EXPECT_EQ(ring.Drain(out, 0), 0u);
  EXPECT_EQ(ring.Drain(out, 4), 1u);
  EXPECT_EQ(ring.pushed(), 1u);
  EXPECT_EQ(ring.dropped(), 0u);
}

TEST(SampleRingTest, WrapsAroundKeepingOrder) {
  SampleRing ring(4);
  uint64_t next_push = 0;
  uint64_t next_drain = 0;
  // 3 in, 2 out per round: the indices wrap many times with the ring never full.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 3 && next_push - next_drain < 4; ++i) {
      ASSERT_TRUE(ring.Push(MakeRecord(next_push++)));
    }
    SampleRecord out[2];
    const size_t n = ring.Drain(out, 2);
    for (size_t i = 0; i < n; ++i) ExpectSameRecord(out[i], MakeRecord(next_drain++));
  }
  for (const SampleRecord& r : DrainAll(ring)) ExpectSameRecord(r, MakeRecord(next_drain++));
  EXPECT_EQ(next_drain, next_push);
  EXPECT_GT(next_push, 40u);  // about 25 laps of a 4-slot ring
  EXPECT_EQ(ring.dropped(), 0u);
  EXPECT_EQ(ring.pushed(), next_push);
}

TEST(SampleRingTest, DrainSplitAtTheEndOfTheBuffer) {
  SampleRing ring(8);
  for (uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(ring.Push(MakeRecord(i)));
  SampleRecord out[8];
  ASSERT_EQ(ring.Drain(out, 6), 6u);
  for (uint64_t i = 6; i < 14; ++i) ASSERT_TRUE(ring.Push(MakeRecord(i)));  // slots 6,7,0..5
  ASSERT_EQ(ring.Drain(out, 8), 8u);
  for (size_t i = 0; i < 8; ++i) ExpectSameRecord(out[i], MakeRecord(6 + i));
}

TEST(SampleRingTest, FullRingCountsEveryDropExactly) {
  SampleRing ring(5);  // rounds to 8
  for (uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(ring.Push(MakeRecord(i)));
  for (uint64_t i = 8; i < 11; ++i) EXPECT_FALSE(ring.Push(MakeRecord(i)));
  EXPECT_EQ(ring.dropped(), 3u);
  EXPECT_EQ(ring.pushed(), 11u);

  const auto drained = DrainAll(ring);
  ASSERT_EQ(drained.size(), 8u);  // the oldest records stay, the refused ones are gone
  for (size_t i = 0; i < drained.size(); ++i) ExpectSameRecord(drained[i], MakeRecord(i));

  EXPECT_TRUE(ring.Push(MakeRecord(11)));  // room again once drained
  EXPECT_EQ(ring.dropped(), 3u);
  EXPECT_EQ(ring.pushed(), 12u);
}

// Producer and consumer on two threads; under ThreadSanitizer this checks the ordering.
constexpr uint64_t kStressRecords = 200'000;

TEST(SampleRingStressTest, NoLossWhenCapacitySuffices) {
  SampleRing ring(64);
  std::atomic<uint64_t> consumed{0};
  std::thread producer([&] {
    for (uint64_t i = 0; i < kStressRecords; ++i) {
      // Flow control outside the ring: never more in flight than it holds.
      while (i - consumed.load(std::memory_order_acquire) >= ring.capacity()) {
        std::this_thread::yield();
      }
      ASSERT_TRUE(ring.Push(MakeRecord(i)));
    }
  });
  uint64_t next = 0;
  bool intact = true;
  SampleRecord out[16];
  while (next < kStressRecords) {
    const size_t n = ring.Drain(out, std::size(out));
    for (size_t i = 0; i < n; ++i) intact = intact && SameRecord(out[i], MakeRecord(next + i));
    next += n;
    consumed.store(next, std::memory_order_release);
    if (n == 0) std::this_thread::yield();
  }
  producer.join();
  EXPECT_TRUE(intact);
  EXPECT_EQ(next, kStressRecords);
  EXPECT_EQ(ring.dropped(), 0u);
  EXPECT_EQ(ring.pushed(), kStressRecords);
}

TEST(SampleRingStressTest, PushedEqualsDrainedPlusDropped) {
  SampleRing ring(16);
  std::atomic<bool> done{false};
  uint64_t accepted = 0;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kStressRecords; ++i) {
      if (ring.Push(MakeRecord(i))) ++accepted;
    }
    done.store(true, std::memory_order_release);
  });
  uint64_t drained = 0;
  uint64_t last_seq = 0;
  bool ordered = true;
  bool intact = true;
  SampleRecord out[5];
  for (;;) {
    const bool finished = done.load(std::memory_order_acquire);
    const size_t n = ring.Drain(out, std::size(out));
    for (size_t i = 0; i < n; ++i) {
      ordered = ordered && (drained + i == 0 || out[i].seq > last_seq);
      intact = intact && SameRecord(out[i], MakeRecord(out[i].seq));
      last_seq = out[i].seq;
    }
    drained += n;
    if (finished && n == 0) break;
  }
  producer.join();
  EXPECT_TRUE(ordered);
  EXPECT_TRUE(intact);
  EXPECT_EQ(ring.pushed(), kStressRecords);
  EXPECT_EQ(drained, accepted);
  EXPECT_EQ(ring.dropped(), kStressRecords - accepted);
  EXPECT_EQ(ring.pushed(), drained + ring.dropped());
}

// ---- Files ------------------------------------------------------------------------------

class SamplesFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "rtpulse_samples_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "run.samples").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static constexpr SamplesFileInfo kInfo{1'700'000'000'123'456'789, 42'000'000'000};

  // A finished file holding records 0..n-1 of thread 0.
  void WriteFile(uint64_t n, uint64_t dropped = 0, bool interrupted = false) {
    auto sink = OpenSamplesFile(path_, kInfo, SamplesFormat::kV1);
    ASSERT_TRUE(sink) << sink.error().message;
    for (uint64_t i = 0; i < n; ++i) {
      const SampleRecord r = MakeRecord(i);
      ASSERT_TRUE((*sink)->Write(&r, 1));
    }
    ASSERT_TRUE((*sink)->Finish(dropped, interrupted));
  }

  std::string ReadBytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void WriteBytes(const std::string& bytes) const {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
  }

  // Reads path_, which the caller expects to be rejected; returns the error message.
  std::string ReadError() const {
    int calls = 0;
    const auto result = ReadSamplesFile(path_, [&](const SampleRecord&) { ++calls; });
    EXPECT_FALSE(result);
    EXPECT_EQ(calls, 0) << "records must not be delivered from a rejected file";
    if (result) return "";
    EXPECT_EQ(result.error().code, ExitCode::kUsage);
    return result.error().message;
  }

  std::vector<SampleRecord> ReadOk(SamplesFileSummary* summary) const {
    return ReadOkAt(path_, summary);
  }
  static std::vector<SampleRecord> ReadOkAt(const std::string& path, SamplesFileSummary* summary) {
    std::vector<SampleRecord> records;
    auto result = ReadSamplesFile(path, [&](const SampleRecord& r) { records.push_back(r); });
    EXPECT_TRUE(result) << result.error().message;
    if (result) *summary = *result;
    return records;
  }

  fs::path dir_;
  std::string path_;
};

template <typename T>
T At(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

TEST_F(SamplesFileTest, LayoutMatchesTheDocumentedOffsets) {
  auto sink = OpenSamplesFile(path_, kInfo, SamplesFormat::kV1);
  ASSERT_TRUE(sink) << sink.error().message;
  SampleRecord r{};
  r.seq = 0x0102030405060708;
  r.expected_ns = -5;
  r.actual_ns = 123456789;
  r.thread = 3;
  r.cpu = 0xFFFF;
  r.wake_path = 8;
  r.flags = SampleRecord::kMissed;
  ASSERT_TRUE((*sink)->Write(&r, 1));
  ASSERT_TRUE((*sink)->Finish(7, true));

  const std::string b = ReadBytes();
  ASSERT_EQ(b.size(), 64u + 32u + 32u);
  EXPECT_EQ(b.substr(0, 8), "RTPSMPL1");
  EXPECT_EQ(At<uint32_t>(b, 8), 1u);    // version
  EXPECT_EQ(At<uint32_t>(b, 12), 64u);  // header bytes
  EXPECT_EQ(At<uint32_t>(b, 16), 32u);  // record bytes
  EXPECT_EQ(At<uint32_t>(b, 20), 1u);   // CLOCK_MONOTONIC
  EXPECT_EQ(At<int64_t>(b, 24), kInfo.start_realtime_ns);
  EXPECT_EQ(At<int64_t>(b, 32), kInfo.start_monotonic_ns);
  EXPECT_EQ(b.substr(40, 24), std::string(24, '\0'));

  EXPECT_EQ(At<uint64_t>(b, 64 + 0), 0x0102030405060708u);
  EXPECT_EQ(static_cast<uint8_t>(b[64]), 0x08);  // little-endian
  EXPECT_EQ(At<int64_t>(b, 64 + 8), -5);
  EXPECT_EQ(At<int64_t>(b, 64 + 16), 123456789);
  EXPECT_EQ(At<uint16_t>(b, 64 + 24), 3u);
  EXPECT_EQ(At<uint16_t>(b, 64 + 26), 0xFFFFu);
  EXPECT_EQ(At<uint8_t>(b, 64 + 28), 8u);
  EXPECT_EQ(At<uint8_t>(b, 64 + 29), 1u);
  EXPECT_EQ(At<uint16_t>(b, 64 + 30), 0u);

  EXPECT_EQ(b.substr(96, 8), "RTPSEND1");
  EXPECT_EQ(At<uint64_t>(b, 96 + 8), 1u);   // records
  EXPECT_EQ(At<uint64_t>(b, 96 + 16), 7u);  // dropped
  EXPECT_EQ(At<uint32_t>(b, 96 + 24), 1u);  // interrupted
  EXPECT_EQ(At<uint32_t>(b, 96 + 28), 0u);
}

TEST_F(SamplesFileTest, WriterRoundTripKeepsEveryField) {
  constexpr uint64_t kPerThread = 20'000;
  SampleRing ring0(1 << 16);
  SampleRing ring1(1 << 16);
  auto sink = OpenSamplesFile(path_, kInfo, SamplesFormat::kV1);
  ASSERT_TRUE(sink) << sink.error().message;
  SampleWriter writer({&ring0, &ring1}, std::move(*sink));
  writer.Start();
  std::thread p0([&] {
    for (uint64_t i = 0; i < kPerThread; ++i) ring0.Push(MakeRecord(i, 0));
  });
  std::thread p1([&] {
    for (uint64_t i = 0; i < kPerThread; ++i) ring1.Push(MakeRecord(i, 1));
  });
  p0.join();
  p1.join();
  const Status stopped = writer.Stop(false);
  ASSERT_TRUE(stopped) << stopped.error().message;

  EXPECT_EQ(writer.written(), 2 * kPerThread);
  EXPECT_EQ(writer.dropped(), 0u);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_FALSE(fs::exists(path_ + ".tmp." + std::to_string(::getpid())));

  SamplesFileSummary summary;
  const auto records = ReadOk(&summary);
  EXPECT_EQ(summary.version, 1u);
  EXPECT_EQ(summary.clock_id, 1u);
  EXPECT_EQ(summary.info.start_realtime_ns, kInfo.start_realtime_ns);
  EXPECT_EQ(summary.info.start_monotonic_ns, kInfo.start_monotonic_ns);
  EXPECT_TRUE(summary.has_trailer);
  EXPECT_EQ(summary.records, 2 * kPerThread);
  EXPECT_EQ(summary.dropped, 0u);
  EXPECT_FALSE(summary.interrupted);
  EXPECT_EQ(summary.partial_bytes, 0u);
  ASSERT_EQ(records.size(), 2 * kPerThread);
  uint64_t next[2] = {0, 0};  // each thread's records appear in push order
  for (const SampleRecord& r : records) {
    ASSERT_LT(r.thread, 2u);
    ExpectSameRecord(r, MakeRecord(next[r.thread]++, r.thread));
  }
  EXPECT_EQ(next[0], kPerThread);
  EXPECT_EQ(next[1], kPerThread);
}

TEST_F(SamplesFileTest, StopDrainsWhatIsLeftAndRecordsDropsAndInterrupt) {
  SampleRing ring(4);
  for (uint64_t i = 0; i < 6; ++i) ring.Push(MakeRecord(i));  // 2 refused
  auto sink = OpenSamplesFile(path_, kInfo, SamplesFormat::kV1);
  ASSERT_TRUE(sink) << sink.error().message;
  SampleWriter writer({&ring}, std::move(*sink));
  ASSERT_TRUE(writer.Stop(true));  // never started: Stop drains in this thread
  EXPECT_EQ(writer.written(), 4u);
  EXPECT_EQ(writer.dropped(), 2u);

  SamplesFileSummary summary;
  const auto records = ReadOk(&summary);
  ASSERT_EQ(records.size(), 4u);
  for (size_t i = 0; i < 4; ++i) ExpectSameRecord(records[i], MakeRecord(i));
  EXPECT_TRUE(summary.has_trailer);
  EXPECT_EQ(summary.dropped, 2u);
  EXPECT_TRUE(summary.interrupted);
  EXPECT_FALSE(writer.Stop(true)) << "a second Stop is a caller bug and must say so";
}

TEST_F(SamplesFileTest, RecordsReachTheTmpFileWhileTheRunGoesOn) {
  SampleRing ring(64);
  auto sink = OpenSamplesFile(path_, kInfo, SamplesFormat::kV1);
  ASSERT_TRUE(sink) << sink.error().message;
  SampleWriter writer({&ring}, std::move(*sink));
  writer.Start();
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(ring.Push(MakeRecord(i)));
  // No more records arrive; the writer's idle ticks must still flush within about a second
  // (what a crash would lose). 10 s is only a hang guard for a loaded machine.
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fs::file_size(tmp) < 64 + 3 * 32 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(fs::file_size(tmp), 64u + 3 * 32u);
  SamplesFileSummary summary;
  EXPECT_EQ(ReadOkAt(tmp, &summary).size(), 3u);
  EXPECT_FALSE(summary.has_trailer);
  ASSERT_TRUE(writer.Stop(false));
  EXPECT_EQ(fs::file_size(path_), 64u + 3 * 32u + 32u);
}

class FailingSink : public SampleSink {
 public:
  Status Write(const SampleRecord*, size_t) override {
    return ++writes_ == 1 ? Status::Ok() : Failure("disk on fire");
  }
  Status Finish(uint64_t, bool) override {
    finished_ = true;
    return Status::Ok();
  }
  static inline bool finished_ = false;

 private:
  int writes_ = 0;
};

TEST(SampleWriterTest, StopReturnsTheFirstWriteError) {
  SampleRing a(4);
  SampleRing b(4);
  a.Push(MakeRecord(0));
  b.Push(MakeRecord(1));
  FailingSink::finished_ = false;
  SampleWriter writer({&a, &b}, std::make_unique<FailingSink>());
  const Status stopped = writer.Stop(false);
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().message, "disk on fire");
  EXPECT_EQ(writer.written(), 1u);
  EXPECT_TRUE(FailingSink::finished_) << "the sink is still finished (it closes its file)";
}

TEST_F(SamplesFileTest, EmptyRunHasTrailerAndNoRecords) {
  WriteFile(0);
  SamplesFileSummary summary;
  EXPECT_TRUE(ReadOk(&summary).empty());
  EXPECT_TRUE(summary.has_trailer);
  EXPECT_EQ(summary.records, 0u);
  EXPECT_EQ(fs::file_size(path_), 64u + 32u);
}

TEST_F(SamplesFileTest, UnfinishedSinkLeavesAReadableTmpWithoutTrailer) {
  {
    auto sink = OpenSamplesFile(path_, kInfo, SamplesFormat::kV1);
    ASSERT_TRUE(sink) << sink.error().message;
    for (uint64_t i = 0; i < 3; ++i) {
      const SampleRecord r = MakeRecord(i);
      ASSERT_TRUE((*sink)->Write(&r, 1));
    }
  }  // destroyed without Finish(), as when the run dies
  EXPECT_FALSE(fs::exists(path_));
  path_ += ".tmp." + std::to_string(::getpid());
  ASSERT_TRUE(fs::exists(path_));
  SamplesFileSummary summary;
  const auto records = ReadOk(&summary);
  EXPECT_FALSE(summary.has_trailer);
  EXPECT_EQ(summary.records, 3u);
  EXPECT_EQ(summary.partial_bytes, 0u);
  EXPECT_EQ(summary.info.start_monotonic_ns, kInfo.start_monotonic_ns);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) ExpectSameRecord(records[i], MakeRecord(i));
}

TEST_F(SamplesFileTest, UnfinishedSinkWithoutRecordsLeavesNothing) {
  {
    auto sink = OpenSamplesFile(path_, kInfo, SamplesFormat::kV1);
    ASSERT_TRUE(sink) << sink.error().message;
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SamplesFileTest, CutOffFileIsReadableAndFlagged) {
  WriteFile(5);
  const std::string whole = ReadBytes();
  WriteBytes(whole.substr(0, 64 + 3 * 32));  // trailer and two records gone
  SamplesFileSummary summary;
  auto records = ReadOk(&summary);
  EXPECT_FALSE(summary.has_trailer);
  EXPECT_EQ(summary.records, 3u);
  EXPECT_EQ(records.size(), 3u);
  EXPECT_EQ(summary.partial_bytes, 0u);
  EXPECT_EQ(summary.dropped, 0u);
  EXPECT_FALSE(summary.interrupted);
}

TEST_F(SamplesFileTest, PartialLastRecordIsReportedNotHidden) {
  WriteFile(5);
  WriteBytes(ReadBytes().substr(0, 64 + 3 * 32 + 10));
  SamplesFileSummary summary;
  const auto records = ReadOk(&summary);
  EXPECT_FALSE(summary.has_trailer);
  EXPECT_EQ(summary.records, 3u);
  EXPECT_EQ(summary.partial_bytes, 10u);
  ASSERT_EQ(records.size(), 3u);
  ExpectSameRecord(records[2], MakeRecord(2));
}

TEST_F(SamplesFileTest, StrayBytesBeforeTheTrailerAreAnError) {
  WriteFile(2);
  std::string b = ReadBytes();
  b.insert(64 + 2 * 32, "12345");
  WriteBytes(b);
  const std::string message = ReadError();
  EXPECT_NE(message.find(path_), std::string::npos) << message;
  EXPECT_NE(message.find("byte offset 128: 5 stray bytes"), std::string::npos) << message;
}

TEST_F(SamplesFileTest, CorruptMagicNamesTheFileAndOffset) {
  WriteFile(2);
  std::string b = ReadBytes();
  b.replace(0, 8, "GARBAGE\x01");
  WriteBytes(b);
  const std::string message = ReadError();
  EXPECT_NE(message.find("'" + path_ + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("byte offset 0"), std::string::npos) << message;
  EXPECT_NE(message.find("\"GARBAGE\\x01\""), std::string::npos) << message;
  EXPECT_NE(message.find("RTPSMPL1"), std::string::npos) << message;
  EXPECT_NE(message.find("rtpulse latency --samples"), std::string::npos) << "the fix: " << message;
}

TEST_F(SamplesFileTest, UnsupportedHeaderFieldsNameTheirOffset) {
  WriteFile(1);
  const std::string good = ReadBytes();
  struct Case {
    size_t offset;
    uint32_t value;
    const char* expected;
  };
  // Version 2 is read too (samples_v2_test.cc); 3 is not.
  for (const Case& c : {Case{8, 3, "byte offset 8: format version 3 is not supported"},
                        Case{12, 128, "byte offset 12: header size is 128"},
                        Case{16, 48, "byte offset 16: record size is 48"}}) {
    std::string b = good;
    std::memcpy(b.data() + c.offset, &c.value, sizeof(c.value));
    WriteBytes(b);
    const std::string message = ReadError();
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

TEST_F(SamplesFileTest, TrailerCountMustMatchTheRecords) {
  WriteFile(3);
  std::string b = ReadBytes();
  const uint64_t wrong = 4;
  std::memcpy(b.data() + b.size() - 24, &wrong, sizeof(wrong));
  WriteBytes(b);
  const std::string message = ReadError();
  EXPECT_NE(message.find("byte offset 168: the trailer counts 4 records but the file holds 3"),
            std::string::npos)
      << message;
}

TEST_F(SamplesFileTest, TooShortForAHeader) {
  WriteBytes("RTPSMPL1\x01");  // our magic, header cut short
  std::string message = ReadError();
  EXPECT_NE(message.find("byte offset 9: the file ends after 9 bytes, inside the 64-byte header"),
            std::string::npos)
      << message;
  WriteBytes("");
  message = ReadError();
  EXPECT_NE(message.find("byte offset 0: the file ends after 0 bytes"), std::string::npos)
      << message;
  EXPECT_NE(message.find("rtpulse latency --samples"), std::string::npos) << message;
  WriteBytes("hello, world\n");  // short, and not ours: the magic says so first
  message = ReadError();
  EXPECT_NE(message.find("byte offset 0: magic is \"hello, w\""), std::string::npos) << message;
}

TEST_F(SamplesFileTest, MissingFileIsAUsageError) {
  path_ = (dir_ / "nope.samples").string();
  const std::string message = ReadError();
  EXPECT_NE(message.find("'" + path_ + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST_F(SamplesFileTest, OpenInAMissingFolderFailsUpFront) {
  const auto sink = OpenSamplesFile((dir_ / "no" / "such" / "x.samples").string(), kInfo);
  ASSERT_FALSE(sink);
  EXPECT_EQ(sink.error().code, ExitCode::kUsage);
  EXPECT_NE(sink.error().message.find("does not exist"), std::string::npos);
}

TEST_F(SamplesFileTest, ADeviceOrFifoIsRefusedAndLeftAsItWas) {
  // A rename onto /dev/null as root would replace the device: refused before anything.
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto sink = OpenSamplesFile(fifo, kInfo);
  ASSERT_FALSE(sink);
  EXPECT_EQ(sink.error().code, ExitCode::kUsage);
  EXPECT_NE(sink.error().message.find("'" + fifo + "' is not a regular file"), std::string::npos)
      << sink.error().message;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

// ---- Verbose sink -----------------------------------------------------------------------

TEST(VerboseSinkTest, MatchesCyclictestVerboseFormat) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = ::open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  auto sink = MakeVerboseSink(out);
  auto rec = [](uint16_t thread, uint64_t seq, int64_t latency_ns) {
    SampleRecord r{};
    r.thread = thread;
    r.seq = seq;
    r.expected_ns = 5'000'000'000;
    r.actual_ns = r.expected_ns + latency_ns;
    return r;
  };
  const SampleRecord records[] = {
      rec(0, 0, 5'000),            // 5 us
      rec(1, 1, 12'999),           // truncated, not rounded: 12
      rec(0, 2, -1'500),           // early wake-up: -1 (toward zero)
      rec(2, 123'456'789, -999),   // -0.999 us prints 0
      rec(10, 3, 12'345'678'901),  // wider than the field
  };
  ASSERT_TRUE(sink->Write(records, std::size(records)));
  ASSERT_TRUE(sink->Finish(0, false));
  std::fclose(out);
  const std::string got(text, size);
  std::free(text);
  EXPECT_EQ(got,
            "       0:       0:       5\n"
            "       1:       1:      12\n"
            "       0:       2:      -1\n"
            "       2:123456789:       0\n"
            "      10:       3:12345678\n");
}

// cyclictest -o RED: one line per RED samples of a thread, the group's largest latency at its
// cycle; the group's maximum starts from 0, and a short last group is not printed.
TEST(VerboseSinkTest, OscopeModePrintsEachGroupsLargestLatencyAtItsCycle) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = ::open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  auto sink = MakeVerboseSink(out, 3);
  std::vector<SampleRecord> records;
  // Two threads interleaved; thread 0's latencies (us) 4 9 2 | 1 1 7 | -3 -2 -1 | 8,
  // thread 1's 5 5 5 | 6.
  const int64_t t0[] = {4, 9, 2, 1, 1, 7, -3, -2, -1, 8};
  const int64_t t1[] = {5, 5, 5, 6};
  for (size_t i = 0; i < std::size(t0); ++i) {
    SampleRecord r{};
    r.thread = 0;
    r.seq = i;
    r.expected_ns = 1'000'000'000;
    r.actual_ns = r.expected_ns + t0[i] * 1000;
    records.push_back(r);
    if (i < std::size(t1)) {
      r.thread = 1;
      r.seq = i;
      r.actual_ns = r.expected_ns + t1[i] * 1000;
      records.push_back(r);
    }
  }
  // Split across two writes: a group spans them.
  ASSERT_TRUE(sink->Write(records.data(), 5));
  ASSERT_TRUE(sink->Write(records.data() + 5, records.size() - 5));
  ASSERT_TRUE(sink->Finish(0, false));
  std::fclose(out);
  const std::string got(text, size);
  std::free(text);
  // The expected lines, computed here from the groups above (first maximum wins a tie; a
  // group with nothing above 0 prints 0 at the previous group's cycle).
  EXPECT_EQ(got,
            "       0:       1:       9\n"
            "       1:       0:       5\n"
            "       0:       5:       7\n"
            "       0:       5:       0\n");
}

}  // namespace
}  // namespace rtpulse::measure

namespace rtpulse::measure {
namespace {

/// Records the writer thread's CPUs from inside its first Write().
class AffinitySink : public SampleSink {
 public:
  Status Write(const SampleRecord*, size_t) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen) {
      CPU_ZERO(&set);
      pthread_getaffinity_np(pthread_self(), sizeof set, &set);
      seen = true;
    }
    return Status::Ok();
  }
  Status Finish(uint64_t, bool) override { return Status::Ok(); }
  std::mutex mu;
  bool seen = false;
  cpu_set_t set{};
};

TEST(SampleWriterTest, ItsThreadRunsOffTheProbesCpus) {
  const std::vector<int> online = OnlineCpus(FsRoot());
  if (online.size() < 2) GTEST_SKIP() << "needs two online CPUs";
  const int probe_cpu = online.back();
  SampleRing ring(4);
  auto sink = std::make_unique<AffinitySink>();
  AffinitySink* seen = sink.get();
  SampleWriter writer({&ring}, std::move(sink), {probe_cpu});
  writer.Start();
  for (int i = 0; i < 2000; ++i) {  // the thread writes (an idle tick) within 5 ms
    {
      std::lock_guard<std::mutex> lock(seen->mu);
      if (seen->seen) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  (void)writer.Stop(false);  // the thread is gone: its sink's record can be read
  ASSERT_TRUE(seen->seen);
  EXPECT_FALSE(CPU_ISSET(static_cast<size_t>(probe_cpu), &seen->set));
  EXPECT_TRUE(CPU_ISSET(static_cast<size_t>(online.front()), &seen->set));
}

}  // namespace
}  // namespace rtpulse::measure
