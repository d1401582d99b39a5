#pragma once

// Where a test finds the built binary, the source tree, its data, the generated models and the
// QEMU guest's output folder. The paths are compiled into one small file of their own
// (test_paths.cc), never into a test program's sources, so a checkout at another path reuses
// every test object from ccache (CCACHE_BASEDIR) and only that file compiles again.

namespace rtpulse::testutil {

const char* RtpulseBinaryPath();  ///< the rtpulse binary built with the tests
const char* SourceDirPath();      ///< the top of the source tree
const char* TestDataPath();       ///< tests/data in the source tree
const char* ModelsDirPath();      ///< the default models built for e2e ("" in a lean build)
const char* QemuDirPath();        ///< the QEMU RT guest's output folder in the build tree

}  // namespace rtpulse::testutil

#define RTPULSE_BINARY (::rtpulse::testutil::RtpulseBinaryPath())
#define RTPULSE_SOURCE_DIR (::rtpulse::testutil::SourceDirPath())
#define RTPULSE_TEST_DATA (::rtpulse::testutil::TestDataPath())
#define RTPULSE_MODELS_DIR (::rtpulse::testutil::ModelsDirPath())
#define RTPULSE_QEMU_DIR (::rtpulse::testutil::QemuDirPath())
