#pragma once

// The fuzz input as a real file for parsers whose public entry point takes a path
// (ImportFile, ReadSamplesFile, ReadSuiteResult, ReadMonitorLog): an anonymous in-memory
// file (memfd) rewritten for every input and opened by the parser as /proc/self/fd/N, a
// regular file to stat(), open() and read() like any other.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace rtpulse::fuzz {

class FuzzInputFile {
 public:
  FuzzInputFile() {
    fd_ = memfd_create("rtpulse-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  FuzzInputFile(const FuzzInputFile&) = delete;
  FuzzInputFile& operator=(const FuzzInputFile&) = delete;
  ~FuzzInputFile() { close(fd_); }

  /// Replaces the file's content with `data` and returns its path.
  const std::string& Write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

/// The one input file of this fuzzing process (libFuzzer runs inputs one after another).
inline FuzzInputFile& InputFile() {
  static FuzzInputFile file;
  return file;
}

}  // namespace rtpulse::fuzz
