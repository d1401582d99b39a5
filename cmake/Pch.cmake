# Precompiled headers: the standard, fmt and JSON headers that most sources include are parsed
# once per build folder instead of once per compiler run (about 3.8 s of each unity batch's
# compile at -O2 went to those headers alone). With GCC (the main and the arm64 builds), one
# precompiled header serves every library (rtpulse_pch_src) and one every test program
# (rtpulse_pch_test, with gtest), each built in a holder target of its own and reused by the
# others (REUSE_FROM), which therefore must share its compile flags: the libraries' are the
# build type's, the test programs' add RTPULSE_TEST_OPT. Measured without ccache on the 2-core
# CI machine: the libraries 427 -> 378 CPU-s, the test programs 746 -> 355.
# Not with clang (the sanitizer builds): its libraries compiled slower with one (471 -> 507
# CPU-s), and Debian 12's ccache (4.7) leaves clang's `-Xclang -include` path absolute, so a
# clone at another path would miss the cache for every test program. Making those paths
# relative (a launcher) did not help: clang writes the absolute paths of the header's inputs
# into the header file itself, so ccache handed a clone a header that named files of another
# clone, and the build failed once that clone was gone (measured and reverted 2026-12-06).
# -Winvalid-pch (an error under RTPULSE_WERROR) fails a build in which a target could not use
# its precompiled header, so the saving cannot quietly vanish. Every source still includes what
# it uses: clang-tidy (scripts/check-tidy) checks each file without precompiled headers
# (build-tidy is configured with RTPULSE_PCH=OFF).
# With ccache as the compiler launcher, ccache is told what its manual asks for precompiled
# headers (sloppiness pch_defines, time_macros and the include files' times), or it would
# compile every source that uses one; and its inode cache, so the 100-140 MB header files are
# hashed once per build instead of once per source.
option(RTPULSE_PCH "Precompiled headers for the standard, fmt, JSON and gtest headers (GCC)" ON)

set(rtpulse_pch_headers
  <algorithm> <atomic> <chrono> <cmath> <cstdint> <cstring> <filesystem> <fstream> <functional>
  <map> <memory> <optional> <sstream> <string> <string_view> <thread> <utility> <vector>
  <fmt/format.h> <nlohmann/json.hpp>)

# Whether this build uses them (above: GCC's only).
set(RTPULSE_PCH_ACTIVE OFF)
if(RTPULSE_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(RTPULSE_PCH_ACTIVE ON)
endif()

# rtpulse_pch_holder(NAME HEADERS... [OPTIONS opts] [LIBS libs]): the target whose precompiled
# header others reuse; none when this build uses no precompiled headers.
function(rtpulse_pch_holder name)
  if(NOT RTPULSE_PCH_ACTIVE)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "HEADERS;OPTIONS;LIBS" ${ARGN})
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${name}.cc)
  # Written only when missing, so a reconfigure does not make it new.
  if(NOT EXISTS ${source})
    file(WRITE ${source} "// The holder of a precompiled header (cmake/Pch.cmake); no code.\n")
  endif()
  add_library(${name} STATIC ${source})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} rtpulse_warnings)
  target_compile_options(${name} PRIVATE ${ARG_OPTIONS})
  target_precompile_headers(${name} PRIVATE ${ARG_HEADERS})
endfunction()

# rtpulse_use_pch(TARGET HOLDER): TARGET compiles with HOLDER's precompiled header, if there
# is that holder.
function(rtpulse_use_pch target holder)
  if(TARGET ${holder})
    target_precompile_headers(${target} REUSE_FROM ${holder})
  endif()
endfunction()

if(RTPULSE_PCH_ACTIVE)
  target_compile_options(rtpulse_warnings INTERFACE -Winvalid-pch)
  if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
    set(CMAKE_CXX_COMPILER_LAUNCHER
        /usr/bin/env
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        CCACHE_INODECACHE=true ${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
endif()
