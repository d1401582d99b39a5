// rtpulse-docgen OUTDIR DATE: writes the man pages (rtpulse.1, rtpulse-<command>.1) and the bash
// completion (rtpulse.bash) generated from the CLI definitions. Run by the build, not installed.

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "cli/app.h"
#include "cli/docgen.h"
#include "core/version.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: rtpulse-docgen OUTDIR YYYY-MM-DD\n");
    return 2;
  }
  std::function<int()> runner;
  const auto app = rtpulse::cli::BuildApp(runner);
  const rtpulse::cli::ManHeader header{std::string(rtpulse::kVersion), argv[2]};
  for (const auto& [name, text] : rtpulse::cli::GenerateDocs(*app, header)) {
    const std::string path = std::string(argv[1]) + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::fprintf(stderr, "rtpulse-docgen: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
