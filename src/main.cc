#include "cli/app.h"

int main(int argc, char** argv) {
  return rtpulse::cli::Main(argc, argv);
}
