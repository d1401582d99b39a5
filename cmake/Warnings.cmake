# Strict warnings for every rtpulse target; RTPULSE_WERROR turns them into errors (CI).
add_library(rtpulse_warnings INTERFACE)
target_compile_options(rtpulse_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast
  -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-align
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough -Wmisleading-indentation
  -Wfloat-equal -Wsuggest-override)
if(RTPULSE_WERROR)
  target_compile_options(rtpulse_warnings INTERFACE -Werror)
endif()
# GCC 12 at -O3 (the Release build) reports false -Wrestrict errors inside std::string's
# inlined memcpy ("accessing 9223372036854775810 or more bytes", GCC bug 105329), in six
# places of src/ that only append or assign short strings. Fixed in GCC 13.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(rtpulse_warnings INTERFACE -Wno-restrict)
endif()
# GCC 12 with -fsanitize reports false -Wmaybe-uninitialized inside libstdc++'s std::function
# (through std::regex) at -O1; the sanitizers check initialisation at run time anyway.
if((RTPULSE_ASAN OR RTPULSE_TSAN) AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(rtpulse_warnings INTERFACE -Wno-maybe-uninitialized)
endif()
