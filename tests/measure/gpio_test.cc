// GPIO line specs and what a machine without GPIO (this build VM, most PCs) is told. The real
// character device is exercised in the QEMU guest's gpio-sim (tests/kernel/qemu_gpio_test.cc).
#include "measure/gpio.h"

#include <glob.h>
#include <gtest/gtest.h>

#include <string>

#include "core/exit_code.h"

namespace rtpulse::measure {
namespace {

bool MachineHasGpioChips() {
  glob_t g{};
  const bool any = glob("/dev/gpiochip*", 0, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return any;
}

TEST(GpioLineSpecTest, ChipAndLineAreSplitAtTheLastColon) {
  auto spec = ParseGpioLine("gpio:gpiochip0:17");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->chip, "gpiochip0");
  EXPECT_EQ(spec->line, "17");
  EXPECT_EQ(spec->text, "gpio:gpiochip0:17");

  spec = ParseGpioLine("gpio:/dev/gpiochip4:GPIO17");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->chip, "/dev/gpiochip4");
  EXPECT_EQ(spec->line, "GPIO17");

  spec = ParseGpioLine("gpio:pinctrl-rp1:GPIO4");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->chip, "pinctrl-rp1");
  EXPECT_EQ(spec->line, "GPIO4");
}

TEST(GpioLineSpecTest, MalformedSpecsAreUsageErrorsThatShowTheForm) {
  for (const char* bad : {"", "gpio", "gpio:", "gpio:gpiochip0", "gpio:gpiochip0:", "gpio::3",
                          "gpiochip0:3", "file:x", "gpio:gpiochip0:12345678"}) {
    SCOPED_TRACE(bad);
    auto spec = ParseGpioLine(bad);
    ASSERT_FALSE(spec);
    EXPECT_EQ(spec.error().code, ExitCode::kUsage);
    EXPECT_NE(spec.error().message.find(std::string("'") + bad + "'"), std::string::npos)
        << spec.error().message;
  }
  auto spec = ParseGpioLine("gpio:gpiochip0");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("gpio:CHIP:LINE"), std::string::npos) << spec.error().message;
}

TEST(GpioLineSpecTest, ALineInUseIsAResourceErrorNamingTheLineAndItsConsumer) {
  GpioLineInfo info;
  info.device = "/dev/gpiochip0";
  info.chip_label = "rtpulse-sim";
  info.offset = 1;
  info.line_name = "wake";
  info.used = true;
  info.consumer = "rtpulse-latency";
  EXPECT_EQ(GpioLineName(info), "line 1 'wake' of /dev/gpiochip0 (rtpulse-sim)");
  auto spec = ParseGpioLine("gpio:rtpulse-sim:wake");
  ASSERT_TRUE(spec);
  const Error e = GpioLineInUse(*spec, info);
  EXPECT_EQ(e.code, ExitCode::kResource);
  EXPECT_EQ(e.message.rfind("gpio:rtpulse-sim:wake: line 1 'wake' of /dev/gpiochip0 (rtpulse-sim) "
                            "is in use by 'rtpulse-latency': ",
                            0),
            0u)
      << e.message;
  info.line_name.clear();
  info.consumer.clear();
  EXPECT_EQ(GpioLineName(info), "line 1 of /dev/gpiochip0 (rtpulse-sim)");
  EXPECT_NE(GpioLineInUse(*spec, info).message.find("in use by 'the kernel'"), std::string::npos);
}

TEST(GpioLineSpecTest, CompiledInFollowsTheBuildOption) {
  EXPECT_EQ(GpioCompiledIn(), RTPULSE_TEST_GPIO != 0);
}

TEST(GpioResolveTest, WithoutLibgpiodEveryOpenNamesThePackage) {
  if (GpioCompiledIn()) GTEST_SKIP() << "this build has libgpiod (RTPULSE_GPIO=ON)";
  auto spec = ParseGpioLine("gpio:gpiochip0:1");
  ASSERT_TRUE(spec);
  auto info = ResolveGpioLine(*spec);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ExitCode::kResource);
  EXPECT_NE(info.error().message.find("libgpiod-dev"), std::string::npos);
  auto out = GpioOutput::Open(*spec, "test", false);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ExitCode::kResource);
  auto in = GpioEdgeInput::Open(*spec, "test", GpioEdges::kBoth);
  ASSERT_FALSE(in);
  EXPECT_NE(in.error().message.find("libgpiod-dev"), std::string::npos);
}

TEST(GpioResolveTest, AMachineWithoutChipsIsToldSoAndHowToGetOne) {
  if (!GpioCompiledIn()) GTEST_SKIP() << "this build has no libgpiod (RTPULSE_GPIO=OFF)";
  if (MachineHasGpioChips()) GTEST_SKIP() << "this machine has /dev/gpiochip*";
  for (const char* text :
       {"gpio:gpiochip0:1", "gpio:/dev/gpiochip3:1", "gpio:pinctrl-rp1:GPIO17"}) {
    SCOPED_TRACE(text);
    auto spec = ParseGpioLine(text);
    ASSERT_TRUE(spec);
    auto info = ResolveGpioLine(*spec);
    ASSERT_FALSE(info);
    EXPECT_EQ(info.error().code, ExitCode::kUsage);
    const std::string& m = info.error().message;
    EXPECT_NE(m.find(text), std::string::npos) << m;
    EXPECT_NE(m.find("no GPIO chip"), std::string::npos) << m;
    EXPECT_NE(m.find("no /dev/gpiochip*"), std::string::npos) << m;
    EXPECT_NE(m.find("gpio-sim"), std::string::npos) << m;
    // Open goes through the same lookup: the same error, nothing requested.
    auto out = GpioOutput::Open(*spec, "test", false);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().message, m);
    auto in = GpioEdgeInput::Open(*spec, "test", GpioEdges::kRising);
    ASSERT_FALSE(in);
    EXPECT_EQ(in.error().message, m);
  }
}

TEST(GpioResolveTest, ANonChipDeviceIsRefusedByName) {
  if (!GpioCompiledIn()) GTEST_SKIP() << "this build has no libgpiod (RTPULSE_GPIO=OFF)";
  auto spec = ParseGpioLine("gpio:/dev/null:1");
  ASSERT_TRUE(spec);
  auto info = ResolveGpioLine(*spec);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ExitCode::kUsage);
  EXPECT_NE(info.error().message.find("/dev/null is not a GPIO chip"), std::string::npos)
      << info.error().message;
}

}  // namespace
}  // namespace rtpulse::measure
