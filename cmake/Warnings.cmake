# Strict warnings for every rtpulse target; RTPULSE_WERROR turns them into errors (CI).
add_library(rtpulse_warnings INTERFACE)
target_compile_options(rtpulse_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast
  -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-align
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough -Wmisleading-indentation)
if(RTPULSE_WERROR)
  target_compile_options(rtpulse_warnings INTERFACE -Werror)
endif()
