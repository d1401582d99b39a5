#include "support/test_paths.h"

namespace rtpulse::testutil {

const char* RtpulseBinaryPath() {
  return RTPULSE_PATH_BINARY;
}

const char* SourceDirPath() {
  return RTPULSE_PATH_SOURCE;
}

const char* TestDataPath() {
  return RTPULSE_PATH_SOURCE "/tests/data";
}

const char* ModelsDirPath() {
  return RTPULSE_PATH_MODELS;
}

const char* QemuDirPath() {
  return RTPULSE_PATH_QEMU;
}

}  // namespace rtpulse::testutil
