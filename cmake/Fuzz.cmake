# libFuzzer targets (fuzz/, scripts/fuzz): every library is built with ASan+UBSan and
# libFuzzer's coverage instrumentation, and each fuzz/ target links libFuzzer's main. clang
# only (Debian clang and libclang-rt-14-dev, scripts/install-deps). scripts/fuzz alone uses a
# build of its own (build-fuzz, the parsers' libraries only); scripts/test's ASan build turns
# it on beside RTPULSE_ASAN, so one compile of the libraries serves the ASan tests and the
# fuzz targets (the coverage instrumentation costs the tests little and is otherwise unused).
option(RTPULSE_FUZZ "Build the libFuzzer targets in fuzz/ (clang; scripts/fuzz runs them)" OFF)
if(RTPULSE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RTPULSE_FUZZ=ON needs clang for libFuzzer (this is "
                        "${CMAKE_CXX_COMPILER_ID}): apt-get install clang libclang-rt-14-dev "
                        "(scripts/install-deps) and configure a build of its own with "
                        "-DCMAKE_CXX_COMPILER=clang++, or run scripts/fuzz")
  endif()
  if(RTPULSE_TSAN)
    message(FATAL_ERROR "RTPULSE_FUZZ=ON brings ASan+UBSan, which ThreadSanitizer excludes; "
                        "configure without RTPULSE_TSAN")
  endif()
  if(RTPULSE_ASAN)  # ASan+UBSan are on already (cmake/Sanitizers.cmake)
    add_compile_options(-fsanitize=fuzzer-no-link)
  else()
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                        -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
  endif()
endif()
