#pragma once

// What every target checks beyond "no crash, no sanitizer report, no hang": a rejected input
// is a usage error (exit 2) whose message a terminal shows as written. Bytes of the input
// reach a message only through Printable (core/printable.h), so the message holds no control
// character but the line breaks the program writes itself, and only well-formed UTF-8. A
// message that breaks the rule aborts, and libFuzzer keeps the input.

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/error.h"

namespace rtpulse::fuzz {

[[noreturn]] inline void FuzzFail(const char* what, std::string_view message) {
  std::fprintf(stderr, "%s: %.*s\n", what, static_cast<int>(message.size()), message.data());
  std::abort();
}

inline void CheckMessageIsPrintable(std::string_view message) {
  size_t i = 0;
  while (i < message.size()) {
    const auto byte = static_cast<unsigned char>(message[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\n') || byte == 0x7F) {
        FuzzFail("error message holds a raw control byte", message);
      }
      ++i;
      continue;
    }
    size_t extra = 0;
    if (byte >= 0xC2 && byte <= 0xDF) {
      extra = 1;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      extra = 2;
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      extra = 3;
    } else {
      FuzzFail("error message holds a byte that is not UTF-8", message);
    }
    for (size_t k = 1; k <= extra; ++k) {
      if (i + k >= message.size() || (static_cast<unsigned char>(message[i + k]) & 0xC0) != 0x80) {
        FuzzFail("error message holds malformed UTF-8", message);
      }
    }
    i += extra + 1;
  }
}

/// A parser's refusal of bad input: a usage error unless `resource_ok` (a load the machine
/// cannot run is a resource error by design), with a printable message.
inline void CheckRejection(const Error& error, bool resource_ok = false) {
  const bool usage = error.code == ExitCode::kUsage;
  const bool resource = resource_ok && error.code == ExitCode::kResource;
  if (!usage && !resource)
    FuzzFail("bad input gave an error that is not a usage error", error.message);
  CheckMessageIsPrintable(error.message);
}

}  // namespace rtpulse::fuzz
