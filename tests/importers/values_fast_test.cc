// The one-value-per-line importer's fast paths (word-at-a-time short lines, batched
// histogram records, parallel ranges, pipes) against the careful per-line parser.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "importers/import.h"
#include "importers/number.h"
#include "support/subprocess.h"

namespace rtpulse::importers {
namespace {

struct CollectLatencies final : SampleConsumer {
  std::vector<int64_t> values;
  void Add(const TimedSample& s) override { values.push_back(s.latency_ns); }
};

/// What ParseScaledNs makes of one line (blanks around the number allowed), or nothing.
std::optional<int64_t> Careful(const std::string& line, int64_t unit_ns) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
  int64_t ns = 0;
  if (ParseScaledNs(line, i, unit_ns, ns) != NumberError::kNone) return std::nullopt;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
  if (i != line.size()) return std::nullopt;
  return ns;
}

/// A random line in one of the shapes values files have: mostly short plain decimals
/// (the word-at-a-time path), some long ones, signs, blanks, CR, exponents.
std::string RandomLine(std::mt19937_64& rng, bool signs) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  std::string line;
  if (pick(25) == 0) line += pick(2) != 0 ? " " : "\t";
  if (signs && pick(20) == 0) line += pick(2) != 0 ? "-" : "+";
  const int whole = pick(12) == 0 ? pick(19) : 1 + pick(4);
  for (int k = 0; k < whole; ++k) line += static_cast<char>('0' + pick(10));
  if (pick(4) != 0 || whole == 0) {
    line += '.';
    const int frac = std::max(pick(10) == 0 ? pick(13) : pick(5), whole == 0 ? 1 : 0);
    for (int k = 0; k < frac; ++k) line += static_cast<char>('0' + pick(10));
  }
  if (pick(40) == 0 && whole > 0) line += "e" + std::to_string(pick(3));
  if (pick(25) == 0) line += ' ';
  if (pick(25) == 0) line += '\r';
  return line;
}

/// Writes `lines` random valid lines (for `unit_ns`) to `path`; returns their values.
/// Without `signs`, all are >= 0 like real latencies (the histogram's all-positive batches).
std::vector<int64_t> WriteRandomValues(const std::string& path, size_t lines, int64_t unit_ns,
                                       uint64_t seed, bool final_newline = true,
                                       bool signs = true) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> values;
  std::string text;
  while (values.size() < lines) {
    const std::string line = RandomLine(rng, signs);
    const auto v = Careful(line, unit_ns);
    if (!v) continue;
    values.push_back(*v);
    text += line;
    if (values.size() < lines || final_newline) text += '\n';
  }
  std::ofstream(path, std::ios::binary) << text;
  return values;
}

void ExpectHistogramOf(const std::vector<int64_t>& values, const Histogram& h) {
  Histogram expected;
  for (int64_t v : values) expected.Record(v);
  EXPECT_EQ(h.count(), expected.count());
  EXPECT_EQ(h.min(), expected.min());
  EXPECT_EQ(h.max(), expected.max());
  EXPECT_EQ(h.sum(), expected.sum());
  EXPECT_TRUE(h.sum_of_squares() == expected.sum_of_squares());
  EXPECT_EQ(h.negative_count(), expected.negative_count());
  std::vector<std::pair<int64_t, uint64_t>> a;
  std::vector<std::pair<int64_t, uint64_t>> b;
  h.ForEachBucket([&](Histogram::Range r, uint64_t n) { a.emplace_back(r.lo, n); });
  expected.ForEachBucket([&](Histogram::Range r, uint64_t n) { b.emplace_back(r.lo, n); });
  EXPECT_EQ(a, b);
}

ImportOptions Values(int64_t unit_ns, int threads = 0) {
  ImportOptions o;
  o.format = Format::kValues;
  o.unit_ns = unit_ns;
  o.threads = threads;
  return o;
}

/// Values(unit_ns, threads) that splits files from 1 MiB on, instead of the default 16 MiB:
/// the parallel path's splitting, ranges and merge on a file a fifth of the size.
ImportOptions SplitFromOneMiB(int64_t unit_ns, int threads) {
  ImportOptions o = Values(unit_ns, threads);
  o.parallel_min_bytes = uint64_t{1} << 20;
  return o;
}

TEST(ValuesFastPath, EveryLineMatchesTheCarefulParserInEveryUnit) {
  testutil::TempDir dir;
  // Units that divide a power of ten exactly, and ones that need rounding.
  for (int64_t unit : {int64_t{1}, int64_t{1000}, int64_t{1'000'000}, int64_t{1'000'000'000},
                       int64_t{7}, int64_t{3000}}) {
    SCOPED_TRACE("unit_ns " + std::to_string(unit));
    const std::string path = dir.File("v" + std::to_string(unit));
    const auto values = WriteRandomValues(path, 20'000, unit, 1234 + static_cast<uint64_t>(unit));
    CollectLatencies streamed;
    auto with_samples = ImportFile(path, Values(unit), &streamed);
    ASSERT_TRUE(with_samples) << with_samples.error().message;
    EXPECT_EQ(streamed.values, values);  // value by value, in order
    ExpectHistogramOf(values, with_samples->probes.at(0).histogram);
    auto batched = ImportFile(path, Values(unit, 1), nullptr);
    ASSERT_TRUE(batched) << batched.error().message;
    ExpectHistogramOf(values, batched->probes.at(0).histogram);
  }
}

TEST(ValuesFastPath, ShortLineShapesAtTheWordEdge) {
  // Lines of 1..9 bytes with the '\n', the point anywhere, and near-misses that must go
  // to the careful parser (or fail there).
  testutil::TempDir dir;
  const std::string path = dir.File("v");
  std::ofstream(path) << "7\n12.5\n1234567\n12345678\n1.234567\n123456.\n0.000001\n9999999\n"
                         "1.2.3\n";
  auto r = ImportFile(path, Values(1000), nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(":9:4: unexpected '.3' after the value"), std::string::npos)
      << r.error().message;
  std::ofstream(path) << "7\n12.5\n1234567\n12345678\n1.234567\n123456.\n0.000001\n9999999";
  CollectLatencies got;
  r = ImportFile(path, Values(1000), &got);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(got.values, (std::vector<int64_t>{7'000, 12'500, 1'234'567'000, 12'345'678'000, 1'235,
                                              123'456'000, 0, 9'999'999'000}));
}

TEST(ValuesFastPath, ManyChunksAndNoFinalNewline) {
  // ~6 MiB: lines cross the 1 MiB read boundaries; the last line has no '\n'.
  testutil::TempDir dir;
  const std::string path = dir.File("v");
  const auto values =
      WriteRandomValues(path, 700'000, 1000, 99, /*final_newline=*/false, /*signs=*/false);
  CollectLatencies streamed;
  auto r = ImportFile(path, Values(1000), &streamed);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(streamed.values, values);
  auto batched = ImportFile(path, Values(1000, 1), nullptr);
  ASSERT_TRUE(batched) << batched.error().message;
  ExpectHistogramOf(values, batched->probes.at(0).histogram);
}

TEST(ValuesFastPath, ParallelRangesGiveTheSameHistogram) {
  // Above the threshold (lowered to 1 MiB): split at line starts, parsed on 2 and 4 threads,
  // merged. ~5 MiB, so each of 4 ranges still crosses a 1 MiB read boundary.
  testutil::TempDir dir;
  const std::string path = dir.File("v");
  const auto values = WriteRandomValues(path, 800'000, 1000, 7);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  ASSERT_GT(st.st_size, 4 << 20);
  ASSERT_LT(st.st_size, 16 << 20);
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    auto r = ImportFile(path, SplitFromOneMiB(1000, threads), nullptr);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->parse_threads, threads);  // the parallel path ran, not its fallback
    ExpectHistogramOf(values, r->probes.at(0).histogram);
    EXPECT_EQ(r->probes.at(0).periods_elapsed, values.size());
  }
  // The default threshold (16 MiB) reads this file on one thread, whatever --jobs says.
  auto whole = ImportFile(path, Values(1000, 4), nullptr);
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(whole->parse_threads, 1);
  ExpectHistogramOf(values, whole->probes.at(0).histogram);
}

TEST(ValuesFastPath, AnErrorInALaterRangeNamesTheExactLine) {
  testutil::TempDir dir;
  const std::string path = dir.File("v");
  const auto values = WriteRandomValues(path, 800'000, 1000, 11);
  std::ofstream(path, std::ios::app) << "12.5\n  3.5x\n";
  const std::string line = std::to_string(values.size() + 2);
  for (int threads : {1, 4}) {
    auto r = ImportFile(path, SplitFromOneMiB(1000, threads), nullptr);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find(":" + line + ":6: unexpected 'x' after the value"),
              std::string::npos)
        << r.error().message;
  }
}

TEST(ValuesFastPath, RandomBytesAreAcceptedOrRefusedLikeTheCarefulParser) {
  // Lines of bytes the word-at-a-time path must tell apart: digits, the point, the bytes
  // either side of '0'..'9', NUL, high bytes, blanks, signs, exponents. The import must
  // take exactly the lines the careful parser takes, with the same values, and stop at the
  // first line it refuses, naming it.
  const std::string alphabet = std::string("0123456789012345678901234567890123456789....") +
                               "/:" + std::string(1, '\0') + "\x80\xfa\xff \r\t-+eE";
  std::mt19937_64 rng(2026);
  testutil::TempDir dir;
  const std::string path = dir.File("v");
  int refused_runs = 0;
  for (int run = 0; run < 400; ++run) {
    std::string text;
    std::vector<int64_t> expected;
    size_t bad_line = 0;  // 1-based, 0 = none
    const size_t lines = 1 + rng() % 6;
    for (size_t l = 1; l <= lines; ++l) {
      std::string line;
      const size_t len = rng() % 10;
      for (size_t k = 0; k < len; ++k) line += alphabet[rng() % alphabet.size()];
      text += line + "\n";
      if (bad_line != 0) continue;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank: skipped
      const auto v = Careful(line, 1000);
      if (v) {
        expected.push_back(*v);
      } else {
        bad_line = l;
      }
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    SCOPED_TRACE("run " + std::to_string(run));
    CollectLatencies streamed;
    auto with_samples = ImportFile(path, Values(1000), &streamed);
    auto batched = ImportFile(path, Values(1000, 1), nullptr);
    if (bad_line != 0) {
      ++refused_runs;
      for (const auto* r : {&with_samples, &batched}) {
        ASSERT_FALSE(*r) << "accepted a file whose line " << bad_line << " is bad";
        EXPECT_NE(r->error().message.find(":" + std::to_string(bad_line) + ":"), std::string::npos)
            << r->error().message;
      }
    } else if (expected.empty()) {
      EXPECT_FALSE(with_samples);  // nothing but blank lines: "no values"
    } else {
      ASSERT_TRUE(with_samples) << with_samples.error().message;
      ASSERT_TRUE(batched) << batched.error().message;
      EXPECT_EQ(streamed.values, expected);
      ExpectHistogramOf(expected, batched->probes.at(0).histogram);
    }
  }
  EXPECT_GT(refused_runs, 50);  // both outcomes were exercised
  EXPECT_LT(refused_runs, 350);
}

TEST(ValuesFastPath, ALineLongerThanTheBufferIsNamed) {
  testutil::TempDir dir;
  const std::string path = dir.File("v");
  std::ofstream(path) << "12\n" << std::string((1 << 20) + 10, '7') << "\n";
  auto r = ImportFile(path, Values(1000), nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(":2:1: line longer than 1048576 bytes"), std::string::npos)
      << r.error().message;
}

TEST(ValuesFastPath, ReadsAPipe) {
  signal(SIGPIPE, SIG_IGN);  // a failed import must not kill the test through the writer
  testutil::TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string path = dir.File("v");
  const auto values = WriteRandomValues(path, 300'000, 1000, 5);
  std::thread writer([&] {
    const std::string text = testutil::ReadFile(path);
    const int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    for (size_t done = 0; fd >= 0 && done < text.size();) {
      const ssize_t n = write(fd, text.data() + done, std::min<size_t>(65'536, text.size() - done));
      if (n <= 0) break;  // the reader gave up: its error is what the test reports
      done += static_cast<size_t>(n);
    }
    if (fd >= 0) close(fd);
  });
  auto r = ImportFile(fifo, Values(1000, 4), nullptr);
  writer.join();
  ASSERT_TRUE(r) << r.error().message;
  ExpectHistogramOf(values, r->probes.at(0).histogram);
}

}  // namespace
}  // namespace rtpulse::importers
