#pragma once
// The QEMU proof guest's serial console (tests/kernel/qemu-rt-boot), parsed for the tests that
// assert on it: "RTPULSE-GUEST: key: value" lines and "begin X" ... "end X" sections. Each
// script of tests/kernel/qemu/guest.d/ prints its own keys and sections.
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "support/test_paths.h"

namespace rtpulse::guest {

constexpr const char* kPrefix = "RTPULSE-GUEST: ";

/// The console split into "key: value" lines and "begin X" ... "end X" sections.
struct GuestConsole {
  bool loaded = false;
  std::string raw;
  std::map<std::string, std::string> values;
  std::map<std::string, std::string> sections;
};

inline GuestConsole Parse(const std::string& text) {
  GuestConsole console;
  console.loaded = true;
  console.raw = text;
  std::istringstream in(text);
  std::string line;
  std::string section;
  std::string body;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(kPrefix, 0) != 0) {
      if (!section.empty()) body += line + "\n";
      continue;
    }
    const std::string rest = line.substr(std::string(kPrefix).size());
    if (rest.rfind("begin ", 0) == 0) {
      section = rest.substr(6);
      body.clear();
    } else if (rest.rfind("end ", 0) == 0) {
      console.sections[section] = body;
      section.clear();
    } else if (const size_t colon = rest.find(": "); colon != std::string::npos) {
      console.values[rest.substr(0, colon)] = rest.substr(colon + 2);
    } else if (const size_t bare = rest.find(':'); bare != std::string::npos) {
      console.values[rest.substr(0, bare)] = "";
    } else {
      console.values[rest] = "";
    }
  }
  return console;
}

inline const GuestConsole& Console() {
  static const GuestConsole kConsole = [] {
    std::ifstream in(std::string(RTPULSE_QEMU_DIR) + "/console.log", std::ios::binary);
    if (!in) return GuestConsole{};
    std::stringstream text;
    text << in.rdbuf();
    return Parse(text.str());
  }();
  return kConsole;
}

}  // namespace rtpulse::guest
