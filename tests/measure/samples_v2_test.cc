// Version 2 samples files (docs/samples-format.md): lossless round trip of any record, the
// block index, torn tails at every byte offset, flipped bytes, and version 1 still read.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/samples_file.h"
#include "measure/sample_log.h"
#include "support/test_paths.h"

namespace rtpulse::measure {
namespace {

namespace fs = std::filesystem;

bool SameV2Record(const SampleRecord& a, const SampleRecord& b) {
  return std::memcmp(&a, &b, sizeof(SampleRecord)) == 0;
}

// A realistic run: `threads` probes at 1 ms, batches of 5 interleaved as the writer drains
// them, jittery latencies, now and then a missed period with a seq gap, a CPU change.
std::vector<SampleRecord> RealisticRecords(size_t n, uint16_t threads, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SampleRecord> out;
  std::vector<uint64_t> seq(threads, 0);
  while (out.size() < n) {
    for (uint16_t t = 0; t < threads && out.size() < n; ++t) {
      for (int k = 0; k < 5 && out.size() < n; ++k) {
        SampleRecord r{};
        if (rng() % 500 == 0) seq[t] += 1 + rng() % 3;  // skipped periods
        r.seq = seq[t]++;
        r.expected_ns = 5'000'000'000 + static_cast<int64_t>(r.seq) * 1'000'000 + t * 17;
        r.actual_ns = r.expected_ns + 3000 + static_cast<int64_t>(rng() % 4000) - 500;
        r.thread = t;
        r.cpu = rng() % 1000 == 0 ? uint16_t{0xFFFF} : static_cast<uint16_t>(t + 1);
        r.wake_path = 0;
        r.flags = rng() % 300 == 0 ? SampleRecord::kMissed : uint8_t{0};
        out.push_back(r);
      }
    }
  }
  return out;
}

// Every field random, extremes included: nothing predicts, everything must round-trip.
std::vector<SampleRecord> GarbageRecords(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t extremes[] = {std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), 0, -1, 1};
  std::vector<SampleRecord> out(n);
  for (SampleRecord& r : out) {
    r.seq = rng() % 4 == 0 ? std::numeric_limits<uint64_t>::max() - rng() % 2 : rng();
    r.expected_ns = rng() % 3 == 0 ? extremes[rng() % 5] : static_cast<int64_t>(rng());
    r.actual_ns = rng() % 3 == 0 ? extremes[rng() % 5] : static_cast<int64_t>(rng());
    r.thread = static_cast<uint16_t>(rng() % 3 == 0 ? 0xFFFF : rng() % 4);
    r.cpu = static_cast<uint16_t>(rng());
    r.wake_path = static_cast<uint8_t>(rng());
    r.flags = static_cast<uint8_t>(rng());
    r.reserved = static_cast<uint16_t>(rng());
  }
  return out;
}

class SamplesV2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "rtpulse_v2_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "run.samples").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static constexpr SamplesFileInfo kInfo{1'700'000'000'000'000'000, 7'000'000'000};

  // Writes `records` through the real sink, in writer-sized batches.
  void WriteV2(const std::vector<SampleRecord>& records, uint64_t dropped = 0,
               bool interrupted = false, SamplesFormat format = SamplesFormat::kV2) {
    auto sink = OpenSamplesFile(path_, kInfo, format);
    ASSERT_TRUE(sink) << sink.error().message;
    for (size_t i = 0; i < records.size(); i += 777) {
      ASSERT_TRUE((*sink)->Write(records.data() + i, std::min<size_t>(777, records.size() - i)));
    }
    ASSERT_TRUE((*sink)->Finish(dropped, interrupted));
  }

  std::vector<SampleRecord> ReadAll(SamplesFileSummary* summary, const std::string& path) {
    std::vector<SampleRecord> got;
    auto read = ReadSamplesFile(path, [&](const SampleRecord& r) { got.push_back(r); });
    EXPECT_TRUE(read) << read.error().message;
    if (read) *summary = *read;
    return got;
  }

  void ExpectSame(const std::vector<SampleRecord>& got, const std::vector<SampleRecord>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(SameV2Record(got[i], want[i])) << "record " << i << " differs";
    }
  }

  std::string Bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(SamplesV2Test, RealisticRunRoundTripsExactlyAndIsCompact) {
  const auto records = RealisticRecords(20'000, 4, 1);
  WriteV2(records, 3, true);
  SamplesFileSummary s;
  ExpectSame(ReadAll(&s, path_), records);
  EXPECT_EQ(s.version, 2u);
  EXPECT_TRUE(s.has_trailer);
  EXPECT_EQ(s.records, records.size());
  EXPECT_EQ(s.dropped, 3u);
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.blocks, (records.size() + 4095) / 4096);
  EXPECT_EQ(s.info.start_monotonic_ns, kInfo.start_monotonic_ns);
  // Jitter of 4 us in 1 ns steps: 2 bytes of latency delta plus little else.
  EXPECT_LT(static_cast<double>(fs::file_size(path_)) / static_cast<double>(records.size()), 3.0);
}

TEST_F(SamplesV2Test, GarbageAndExtremesRoundTripExactly) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    auto records = GarbageRecords(5000, seed);
    // Mix in predictable stretches so raw and predicted blocks, and runs next to explicit
    // records of garbage values, all occur.
    const auto good = RealisticRecords(3000, 2, seed);
    records.insert(records.begin() + 1000, good.begin(), good.end());
    WriteV2(records);
    SamplesFileSummary s;
    ExpectSame(ReadAll(&s, path_), records);
  }
}

// Latencies as import writes them: log-normal-ish values, now and then a spike, a negative,
// a value at an int64 extreme.
std::vector<int64_t> ImportLatencies(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t extremes[] = {std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), 0, -1};
  std::vector<int64_t> out(n);
  for (int64_t& v : out) {
    const uint64_t pick = rng() % 1000;
    v = pick == 0   ? extremes[rng() % 4]
        : pick < 5  ? -static_cast<int64_t>(rng() % 100'000)
        : pick < 20 ? static_cast<int64_t>(rng() % 1'000'000'000)
                    : static_cast<int64_t>(10'000 + rng() % 30'000);
  }
  return out;
}

std::vector<SampleRecord> LatencyRecords(const std::vector<int64_t>& latencies,
                                         uint64_t first_seq) {
  std::vector<SampleRecord> out;
  for (size_t i = 0; i < latencies.size(); ++i) {
    out.push_back(SampleRecord{first_seq + i, 0, latencies[i], 0, 0xFFFF, 0, 0, 0});
  }
  return out;
}

// The latency-only encoder is a shortcut for one shape of records: it must write exactly the
// bytes the general encoder writes for them, at every block length and any seq.
TEST(SamplesV2LatencyBlockTest, WritesTheGeneralEncodersBytes) {
  const uint64_t seqs[] = {
      0, 1, 127, 128, 4096, uint64_t{1} << 40, std::numeric_limits<uint64_t>::max() - 5000};
  size_t blocks = 0;
  for (const size_t n :
       {size_t{1}, size_t{2}, size_t{3}, size_t{100}, size_t{4095}, size_t{4096}}) {
    for (const uint64_t seq : seqs) {
      const auto latencies = ImportLatencies(n, static_cast<uint32_t>(n + seq % 977));
      const auto records = LatencyRecords(latencies, seq);
      std::vector<std::byte> general(3, std::byte{0x55});  // a prefix, as in a real buffer
      std::vector<std::byte> shortcut = general;
      samples_format::AppendBlockV2(records.data(), records.size(), general);
      samples_format::AppendLatencyBlockV2(latencies.data(), latencies.size(), seq, shortcut);
      ASSERT_EQ(shortcut, general) << n << " records from seq " << seq;
      ++blocks;
    }
  }
  EXPECT_EQ(blocks, 42U);
}

// Through the sinks: WriteLatencies (odd batch sizes, seq jumps, records in between) gives
// the records Write gives, in the same blocks, directly and behind the background thread.
// (Not compared byte for byte: a sink closes a partial block once a second, so a slow run,
// under a sanitizer or qemu, may cut a block elsewhere; the encoder test above pins bytes.)
TEST_F(SamplesV2Test, WriteLatenciesGivesTheFileWriteGives) {
  std::vector<SampleRecord> all;
  std::vector<std::tuple<std::vector<int64_t>, uint64_t, std::vector<SampleRecord>>> parts;
  uint64_t seq = 0;
  uint32_t seed = 1;
  for (const size_t n : {size_t{10}, size_t{5000}, size_t{70'000}, size_t{4096}, size_t{1}}) {
    auto latencies = ImportLatencies(n, seed++);
    auto records = LatencyRecords(latencies, seq);
    all.insert(all.end(), records.begin(), records.end());
    seq += n + (n == 5000 ? 17 : 0);  // one seq jump: a new batch starts there
    // Records of another shape between two latency runs.
    const auto other = RealisticRecords(n == 70'000 ? 3000 : 0, 2, seed++);
    all.insert(all.end(), other.begin(), other.end());
    parts.emplace_back(std::move(latencies), seq - n - (n == 5000 ? 17 : 0), other);
  }
  WriteV2(all);
  SamplesFileSummary s;
  ExpectSame(ReadAll(&s, path_), all);
  for (const bool background : {false, true}) {
    fs::remove(path_);
    auto sink = OpenSamplesFile(path_, kInfo);
    ASSERT_TRUE(sink) << sink.error().message;
    std::unique_ptr<SampleSink> w = std::move(*sink);
    if (background) w = MakeBackgroundSink(std::move(w), 2);
    for (const auto& [latencies, first_seq, other] : parts) {
      for (size_t i = 0; i < latencies.size(); i += 3001) {
        const size_t n = std::min<size_t>(3001, latencies.size() - i);
        ASSERT_TRUE(w->WriteLatencies(latencies.data() + i, n, first_seq + i));
      }
      if (!other.empty()) {
        ASSERT_TRUE(w->Write(other.data(), other.size()));
      }
    }
    ASSERT_TRUE(w->Finish(0, false));
    SamplesFileSummary got;
    SCOPED_TRACE(background ? "background sink" : "file sink");
    ExpectSame(ReadAll(&got, path_), all);
    EXPECT_TRUE(got.has_trailer);
    EXPECT_EQ(got.records, all.size());
  }
}

TEST_F(SamplesV2Test, EmptyRunIsHeaderIndexAndTrailer) {
  WriteV2({});
  SamplesFileSummary s;
  EXPECT_TRUE(ReadAll(&s, path_).empty());
  EXPECT_TRUE(s.has_trailer);
  EXPECT_EQ(fs::file_size(path_), 64u + 48u);
  const auto check = CheckSamplesFile(path_);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->whole()) << check->problem;
}

TEST_F(SamplesV2Test, IndexGivesRandomAccessToEveryBlock) {
  const auto records = RealisticRecords(10'000, 2, 7);
  WriteV2(records);
  const auto index = ReadSamplesIndex(path_);
  ASSERT_TRUE(index) << index.error().message;
  ASSERT_EQ(index->size(), 3u);  // 4096 + 4096 + 1808
  size_t first = 0;
  // Last block first: each block alone yields exactly its slice of the input.
  for (size_t b = index->size(); b-- > 0;) {
    first = 0;
    for (size_t k = 0; k < b; ++k) first += (*index)[k].count;
    std::vector<SampleRecord> got;
    const auto n =
        ReadSamplesBlock(path_, (*index)[b], [&](const SampleRecord& r) { got.push_back(r); });
    ASSERT_TRUE(n) << n.error().message;
    ASSERT_EQ(*n, (*index)[b].count);
    EXPECT_EQ((*index)[b].first_seq, records[first].seq);
    EXPECT_EQ((*index)[b].first_expected_ns, records[first].expected_ns);
    ExpectSame(got, std::vector<SampleRecord>(records.begin() + static_cast<long>(first),
                                              records.begin() + static_cast<long>(first + *n)));
  }
}

// Cut the file at every byte offset: each prefix yields exactly the whole blocks before
// the cut (nothing more, nothing less), and the check says where the torn tail starts.
TEST_F(SamplesV2Test, TruncationAtEveryByteRecoversTheWholeBlocksBeforeIt) {
  const std::vector<SampleRecord> records = RealisticRecords(300, 2, 3);
  std::vector<uint64_t> block_ends;  // file size after each block
  // Make a multi-block file by hand from the public encoder, so block boundaries are known.
  std::vector<std::byte> file(samples_format::kHeaderBytes);
  samples_format::EncodeHeaderV2(kInfo, file.data());
  std::vector<SamplesBlock> blocks;
  const size_t sizes[] = {1, 120, 79, 100};
  size_t at = 0;
  for (size_t n : sizes) {
    blocks.push_back(
        {file.size(), records[at].seq, records[at].expected_ns, static_cast<uint32_t>(n)});
    samples_format::AppendBlockV2(records.data() + at, n, file);
    at += n;
    block_ends.push_back(file.size());
  }
  const uint64_t index_offset = file.size();
  samples_format::AppendIndexAndTrailerV2(blocks, at, 0, false, index_offset, file);
  const std::string whole(reinterpret_cast<const char*>(file.data()), file.size());

  for (size_t cut = 64; cut <= whole.size(); ++cut) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << whole.substr(0, cut);
    size_t whole_blocks = 0;
    size_t want_records = 0;
    for (size_t b = 0; b < block_ends.size(); ++b) {
      if (block_ends[b] <= cut) {
        ++whole_blocks;
        want_records += sizes[b];
      }
    }
    const uint64_t torn_at = whole_blocks == 0 ? 64 : block_ends[whole_blocks - 1];
    SamplesFileSummary s;
    const auto got = ReadAll(&s, path_);
    ASSERT_EQ(got.size(), want_records) << "cut at " << cut;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(SameV2Record(got[i], records[i]));
    const auto check = CheckSamplesFile(path_);
    ASSERT_TRUE(check) << check.error().message;
    EXPECT_EQ(check->records, want_records) << "cut at " << cut;
    if (cut == whole.size()) {
      EXPECT_TRUE(s.has_trailer);
      EXPECT_TRUE(check->whole()) << check->problem;
      EXPECT_EQ(check->blocks_whole, 4u);
      continue;
    }
    EXPECT_FALSE(s.has_trailer) << "cut at " << cut;
    EXPECT_FALSE(check->whole()) << "cut at " << cut;
    EXPECT_EQ(check->blocks_whole, whole_blocks) << "cut at " << cut;
    if (cut <= index_offset) {
      EXPECT_EQ(s.torn_offset, cut == torn_at ? 0 : torn_at) << "cut at " << cut;
      EXPECT_EQ(s.partial_bytes, cut - torn_at) << "cut at " << cut;
      EXPECT_EQ(check->torn_bytes, cut - torn_at) << "cut at " << cut;
      if (cut > torn_at) {
        EXPECT_EQ(check->torn_offset, torn_at) << "cut at " << cut;
      }
    } else {
      // Inside the index or trailer: every block is whole, the index is what is torn.
      EXPECT_EQ(check->torn_offset, index_offset) << "cut at " << cut;
    }
  }
}

TEST_F(SamplesV2Test, FlippedByteIsCaughtAndTheBlocksBeforeItRecovered) {
  const auto records = RealisticRecords(9000, 2, 11);
  WriteV2(records);
  const auto index = ReadSamplesIndex(path_);
  ASSERT_TRUE(index);
  ASSERT_EQ(index->size(), 3u);
  const std::string good = Bytes();
  // One byte in the middle of the second block's payload.
  std::string bad = good;
  const size_t flip = (*index)[1].offset + 40 + 100;
  bad[flip] = static_cast<char>(bad[flip] ^ 0x10);
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << bad;

  std::vector<SampleRecord> got;
  const auto read = ReadSamplesFile(path_, [&](const SampleRecord& r) { got.push_back(r); });
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ExitCode::kUsage);
  EXPECT_NE(read.error().message.find("byte offset " + std::to_string((*index)[1].offset)),
            std::string::npos)
      << read.error().message;
  EXPECT_NE(read.error().message.find("checksum"), std::string::npos) << read.error().message;
  ASSERT_EQ(got.size(), 4096u);  // the first block, exactly
  for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(SameV2Record(got[i], records[i]));

  const auto check = CheckSamplesFile(path_);
  ASSERT_TRUE(check);
  EXPECT_FALSE(check->whole());
  EXPECT_EQ(check->blocks_whole, 2u);  // blocks 0 and 2 check, 1 does not
  EXPECT_EQ(check->blocks_bad, 1u);
  EXPECT_EQ(check->records, records.size() - 4096);
  EXPECT_EQ(check->torn_offset, (*index)[1].offset);

  // A flipped byte in the index is caught by the trailer's checksum.
  bad = good;
  const size_t in_index = good.size() - 48 - 32 + 3;  // the last index entry's offset
  bad[in_index] = static_cast<char>(bad[in_index] ^ 0x01);
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << bad;
  got.clear();
  EXPECT_FALSE(ReadSamplesFile(path_, [&](const SampleRecord& r) { got.push_back(r); }));
  EXPECT_TRUE(got.empty());
}

TEST_F(SamplesV2Test, UnfinishedSinkLeavesReadableBlocksWithoutTrailer) {
  const auto records = RealisticRecords(5000, 2, 5);
  {
    auto sink = OpenSamplesFile(path_, kInfo);
    ASSERT_TRUE(sink);
    ASSERT_TRUE((*sink)->Write(records.data(), records.size()));
  }  // destroyed without Finish(), as when the run dies
  EXPECT_FALSE(fs::exists(path_));
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  SamplesFileSummary s;
  ExpectSame(ReadAll(&s, tmp), records);
  EXPECT_FALSE(s.has_trailer);
  EXPECT_EQ(s.partial_bytes, 0u);
  EXPECT_EQ(s.blocks, 2u);
}

TEST_F(SamplesV2Test, BadHeaderFieldsNameTheirOffsetAndDeliverNothing) {
  WriteV2(RealisticRecords(10, 1, 2));
  const std::string good = Bytes();
  struct Case {
    size_t offset;
    uint32_t value;
    const char* expected;
  };
  for (const Case& c : {Case{12, 128, "byte offset 12: header size is 128, version 2 requires 64"},
                        Case{16, 0, "byte offset 16: block size is 0 records"}}) {
    std::string b = good;
    std::memcpy(b.data() + c.offset, &c.value, sizeof(c.value));
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << b;
    int calls = 0;
    const auto read = ReadSamplesFile(path_, [&](const SampleRecord&) { ++calls; });
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ExitCode::kUsage);
    EXPECT_NE(read.error().message.find(c.expected), std::string::npos) << read.error().message;
    EXPECT_EQ(calls, 0);
  }
}

TEST_F(SamplesV2Test, VersionOneFilesStillRead) {
  const auto records = RealisticRecords(1000, 3, 9);
  WriteV2(records, 2, false, SamplesFormat::kV1);
  EXPECT_EQ(fs::file_size(path_), 64u + 32u * records.size() + 32u);
  SamplesFileSummary s;
  ExpectSame(ReadAll(&s, path_), records);
  EXPECT_EQ(s.version, 1u);
  EXPECT_EQ(s.dropped, 2u);
  const auto check = CheckSamplesFile(path_);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->whole());
  EXPECT_EQ(check->version, 1u);
  EXPECT_EQ(check->records, records.size());
  EXPECT_FALSE(ReadSamplesIndex(path_));
}

// The v1 fixture committed with the tests: the bytes an old rtpulse wrote.
TEST_F(SamplesV2Test, VersionOneFixtureReads) {
  SamplesFileSummary s;
  const auto got =
      ReadAll(&s, std::string(RTPULSE_SOURCE_DIR) + "/tests/data/samples/v1-3records.samples");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(s.version, 1u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].seq, i);
    EXPECT_EQ(got[i].expected_ns, 1'000'000'000 + static_cast<int64_t>(i) * 1'000'000);
    EXPECT_EQ(LatencyNs(got[i]), 1000 * static_cast<int64_t>(i + 1));
    EXPECT_EQ(got[i].thread, 0u);
    EXPECT_EQ(got[i].cpu, 2u);
  }
  EXPECT_EQ(got[2].flags, SampleRecord::kMissed);
}

}  // namespace
}  // namespace rtpulse::measure

namespace rtpulse::measure {
namespace {

uint64_t Fnv1a(const std::vector<std::byte>& bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (std::byte b : bytes) {
    h ^= std::to_integer<uint64_t>(b);
    h *= 1099511628211ULL;
  }
  return h;
}

// The encoder's exact bytes for fixed inputs: realistic runs (regular runs, gaps, CPU
// changes, interleaved threads), garbage (raw blocks), short blocks, one thread in a run of
// many. Any change in what AppendBlockV2 writes (a new format) fails here; a faster encoder
// must write the same bytes.
TEST(SamplesV2GoldenTest, BlockBytesAreUnchanged) {
  std::vector<std::byte> out;
  for (const auto& [n, threads, seed] : {std::tuple<size_t, uint16_t, uint32_t>{4096, 3, 7},
                                         {4096, 1, 8},
                                         {1000, 4, 9},
                                         {1, 1, 10},
                                         {77, 2, 11}}) {
    const auto records = RealisticRecords(n, threads, seed);
    samples_format::AppendBlockV2(records.data(), records.size(), out);
  }
  const auto garbage = GarbageRecords(500, 12);
  samples_format::AppendBlockV2(garbage.data(), garbage.size(), out);
  // Imported values: seq 0, 1, 2, ..., deadline 0, thread 0, cpu 0xFFFF.
  std::vector<SampleRecord> values(4096);
  std::mt19937_64 rng(13);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] =
        SampleRecord{i, 0, static_cast<int64_t>(20'000 + rng() % 9'000), 0, 0xFFFF, 0, 0, 0};
  }
  samples_format::AppendBlockV2(values.data(), values.size(), out);
  EXPECT_EQ(out.size(), 45726U);
  EXPECT_EQ(Fnv1a(out), 7986051822693688497ULL);
}

}  // namespace
}  // namespace rtpulse::measure
