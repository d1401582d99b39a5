# What `cmake --install` puts where, and the Debian package built from it with CPack
# (`cpack -G DEB` in the build folder; scripts/check-package builds and checks it).
# The binary, man pages and bash completion are installed in src/CMakeLists.txt.

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# `rtpulse e2e`'s generated default model (latency-representative, not trained), found by the
# command beside the binary's share folder: PREFIX/share/rtpulse/models/depth-default.onnx.
if(RTPULSE_INFERENCE AND RTPULSE_MODEL_GENERATOR_OK)
  install(FILES ${RTPULSE_MODELS_DIR}/depth-default.onnx ${RTPULSE_MODELS_DIR}/depth-default.tflite
          DESTINATION ${CMAKE_INSTALL_DATADIR}/rtpulse/models)
endif()

set(RTPULSE_PACKAGE_MAINTAINER "rtpulse developers <rtpulse@localhost>"
    CACHE STRING "Maintainer field of the .deb (Name <email>)")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rtpulse)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "measure, explain and prove real-time latency on Linux")
set(CPACK_PACKAGE_DESCRIPTION
    "rtpulse measures scheduling latency as a drop-in for cyclictest (same flags, text and JSON\n"
    "output) with percentiles and error bounds, counted missed periods, nine wake paths, a\n"
    "per-sample log and a ground-truth injector; it runs a scenario suite under load with\n"
    "thermal monitoring, audits a machine for real-time use and compares runs.")
set(CPACK_PACKAGE_CONTACT "${RTPULSE_PACKAGE_MAINTAINER}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: computed by dpkg-shlibdeps from the libraries the binary links (libc, libstdc++,
# libfmt, zlib...), so it is right for whichever Debian release builds the package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The tools rtpulse runs when present: loads (stress-ng), figures (gnuplot), the cyclictest
# comparison and `check`'s tool audit (rt-tests), rt-app workloads, Raspberry Pi firmware
# throttling (vcgencmd).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "stress-ng, gnuplot-nox | gnuplot")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "rt-tests, rt-app, libraspberrypi-bin | raspi-utils")
include(CPack)
