# Cross-compiles rtpulse for 64-bit Arm Linux (the Raspberry Pi 5) with Debian's cross
# toolchain (crossbuild-essential-arm64) and the :arm64 multiarch development packages, and
# runs the built test programs under qemu-user (qemu-user-static). scripts/test-arm64 uses it;
# `scripts/install-deps --arm64` installs what it needs.
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Multiarch: arm64 libraries and CMake package files live in /usr/lib/aarch64-linux-gnu;
# headers in /usr/include are shared by every architecture (arch-specific ones sit in
# /usr/include/aarch64-linux-gnu, which the cross compiler searches itself). Programs found
# while configuring are the build machine's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# ctest (and gtest_discover_tests at build time) run the arm64 test programs through this.
# The arm64 loader and libraries are the multiarch ones (libc6:arm64 etc.), at the paths an
# arm64 machine has them, so qemu needs no -L prefix.
find_program(RTPULSE_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${RTPULSE_QEMU_AARCH64}")
