#include "core/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace rtpulse {
namespace {

using namespace std::string_literals;

TEST(PrintableTest, PlainTextIsUnchanged) {
  EXPECT_EQ(Printable(""), "");
  EXPECT_EQ(Printable("12.5 us, 'abc' # x ~"), "12.5 us, 'abc' # x ~");
  EXPECT_EQ(Printable("a\\x00b"), "a\\x00b");  // a backslash stays: idempotent
}

TEST(PrintableTest, ControlBytesAreEscaped) {
  EXPECT_EQ(Printable("a\0b"s), "a\\x00b");
  EXPECT_EQ(Printable("\x1b[2J\x7f"), "\\x1b[2J\\x7f");
  EXPECT_EQ(Printable("1\t2\r\n"), "1\\t2\\r\\n");
  EXPECT_EQ(Printable("\x01\x1f"), "\\x01\\x1f");
}

TEST(PrintableTest, WellFormedUtf8StaysAndEverythingElseIsEscaped) {
  EXPECT_EQ(Printable("12 \xc2\xb5s"), "12 \xc2\xb5s");              // U+00B5
  EXPECT_EQ(Printable("\xe2\x82\xac"), "\xe2\x82\xac");              // U+20AC
  EXPECT_EQ(Printable("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");      // U+1F600
  EXPECT_EQ(Printable("\xc2\x9b"), "\\xc2\\x9b");                    // C1 CSI
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // surrogate
  EXPECT_EQ(Printable("\xe2\x82"), "\\xe2\\x82");                    // cut short
  EXPECT_EQ(Printable("\xff\xfe"), "\\xff\\xfe");                    // never UTF-8
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST(PrintableTest, EveryByteComesOutPrintableAndApplyingTwiceChangesNothing) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const std::string once = Printable(all);
  EXPECT_EQ(Printable(once), once);
  for (const char c : once) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 && u < 0x7F) << "byte " << static_cast<int>(u);  // all single bytes
  }
  // 95 printable characters, 3 short escapes of 2 characters, 158 of 4.
  EXPECT_EQ(once.size(), 95u + 3u * 2u + 158u * 4u);
}

TEST(OneLineTest, JoinsTrimmedLinesAndDropsTheEmptyOnes) {
  // OpenCV 4.6's ONNX importer: a description, then "> "-marked detail lines.
  EXPECT_EQ(OneLine("ONNX: failed to parse\n> Node [NoSuchOperator]:(mystery_node)\n"
                    ">    unsupported\n\n"),
            "ONNX: failed to parse; Node [NoSuchOperator]:(mystery_node); unsupported");
  EXPECT_EQ(OneLine("  one line  "), "one line");
  EXPECT_EQ(OneLine("a\r\nb"), "a; b");
  EXPECT_EQ(OneLine(""), "");
  EXPECT_EQ(OneLine("\n\n>\n"), "");
}

}  // namespace
}  // namespace rtpulse
