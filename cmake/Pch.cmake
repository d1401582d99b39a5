# Precompiled headers: the standard, fmt and JSON headers that most sources include are parsed
# once per build folder instead of once per compiler run (about 3.8 s of each unity batch's
# compile at -O2 went to those headers alone). With GCC (the main and the arm64 builds), one
# precompiled header serves every library (rtpulse_pch_src) and one every test program
# (rtpulse_pch_test, with gtest), each built in a holder target of its own and reused by the
# others (REUSE_FROM), which therefore must share its compile flags: the libraries' are the
# build type's, the test programs' add RTPULSE_TEST_OPT. Measured without ccache on the 2-core
# CI machine: the libraries 427 -> 378 CPU-s, the test programs 746 -> 355.
# With clang (the sanitizer builds) for the test programs only: its libraries compiled slower
# with one (471 -> 507 CPU-s), its test programs faster (ASan's 65 test and fuzz programs
# about 440 -> 379 CPU-s with their links). Debian 12's ccache (4.7) leaves clang's
# `-Xclang -include-pch` path absolute, so clang's launcher is cmake/ccache-pch, which makes
# it relative, and the header is written without the headers' times (-fno-pch-timestamp): a
# clone at another path builds the same header file and reuses every test object.
# -Winvalid-pch (an error under RTPULSE_WERROR) fails a build in which a target could not use
# its precompiled header, so the saving cannot quietly vanish. Every source still includes what
# it uses: clang-tidy (scripts/check-tidy) checks each file without precompiled headers
# (build-tidy is configured with RTPULSE_PCH=OFF).
# With ccache as the compiler launcher, ccache is told what its manual asks for precompiled
# headers (sloppiness pch_defines, time_macros and the include files' times), or it would
# compile every source that uses one; and its inode cache, so the 100-140 MB header files are
# hashed once per build instead of once per source.
option(RTPULSE_PCH "Precompiled headers for the standard, fmt, JSON and gtest headers" ON)

set(rtpulse_pch_headers
  <algorithm> <atomic> <chrono> <cmath> <cstdint> <cstring> <filesystem> <fstream> <functional>
  <map> <memory> <optional> <sstream> <string> <string_view> <thread> <utility> <vector>
  <fmt/format.h> <nlohmann/json.hpp>)

# Which precompiled headers this build uses: the test programs' with GCC and clang, the
# libraries' with GCC only (above).
set(RTPULSE_PCH_ACTIVE OFF)
set(RTPULSE_PCH_SRC OFF)
if(RTPULSE_PCH AND CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang)$")
  set(RTPULSE_PCH_ACTIVE ON)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(RTPULSE_PCH_SRC ON)
  endif()
endif()

# rtpulse_pch_holder(NAME [SOURCES] HEADERS... [OPTIONS opts] [LIBS libs]): the target whose
# precompiled header others reuse; none when this build uses no precompiled headers (SOURCES:
# the libraries' header, GCC only).
function(rtpulse_pch_holder name)
  cmake_parse_arguments(ARG "SOURCES" "" "HEADERS;OPTIONS;LIBS" ${ARGN})
  if(NOT RTPULSE_PCH_ACTIVE OR (ARG_SOURCES AND NOT RTPULSE_PCH_SRC))
    return()
  endif()
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${name}.cc)
  # Written only when missing, so a reconfigure does not make it new.
  if(NOT EXISTS ${source})
    file(WRITE ${source} "// The holder of a precompiled header (cmake/Pch.cmake); no code.\n")
  endif()
  add_library(${name} STATIC ${source})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} rtpulse_warnings)
  target_compile_options(${name} PRIVATE ${ARG_OPTIONS})
  target_precompile_headers(${name} PRIVATE ${ARG_HEADERS})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Without the headers' times in it, the header is the same file in every build of the same
    # sources, so ccache can reuse what was compiled with it.
    target_compile_options(${name} PRIVATE -Xclang -fno-pch-timestamp)
  endif()
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
  if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$" AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # clang's header paths made relative too (cmake/ccache-pch says why).
    set(CMAKE_CXX_COMPILER_LAUNCHER ${PROJECT_SOURCE_DIR}/cmake/ccache-pch
        ${CMAKE_CXX_COMPILER_LAUNCHER})
  elseif(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
    set(CMAKE_CXX_COMPILER_LAUNCHER
        /usr/bin/env
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        CCACHE_INODECACHE=true ${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
endif()
