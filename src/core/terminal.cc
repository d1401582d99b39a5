#include "core/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace rtpulse {

bool ColorEnabled(bool is_terminal, const char* no_color, const char* term) {
  if (no_color != nullptr && no_color[0] != '\0') return false;
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return is_terminal;
}

bool ColorEnabled(int fd) {
  return ColorEnabled(isatty(fd) != 0, std::getenv("NO_COLOR"), std::getenv("TERM"));
}

}  // namespace rtpulse
