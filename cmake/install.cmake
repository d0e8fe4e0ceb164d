# `cmake --install build --prefix P`: the CLI, the libraries, the public headers, a CMake package
# (find_package(powershape [COMPONENTS CUDA]) gives powershape::powershape, and with CUDA
# powershape::kernels and powershape::gpu), a pkg-config file, and the profiles and recorded data
# under share/powershape, where an installed powershape finds them (util/share_dir.cpp).
include(CMakePackageConfigHelpers)
# Installed programs and shared libraries are stripped unless -DPOWERSHAPE_INSTALL_STRIP=OFF
# (the CLI is ~90 MB with RelWithDebInfo's debug information, ~2 MB without); cmake --install
# --strip does the same for any build. The static libraries lose their debug information too
# (libpowershape.a: 88 MB, 17 MB without), at the end of this file.
option(POWERSHAPE_INSTALL_STRIP "Strip the installed programs and shared libraries" ON)
if(POWERSHAPE_INSTALL_STRIP)
  install(CODE "set(CMAKE_INSTALL_DO_STRIP 1)")
endif()
set(POWERSHAPE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/powershape)

install(TARGETS powershape_bin RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS powershape EXPORT powershapeTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The C API: libpowershape_c.so and include/powershape/powershape.h (powershape::powershape_c).
install(TARGETS powershape_c EXPORT powershapeTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The LM head op alone, through the same header (powershape::op): no NVML, no tune cache. With
# CUDA it needs the toolkit's targets, which the CUDA component's file brings.
if(POWERSHAPE_CUDA)
  set(op_export powershapeCudaTargets)
else()
  set(op_export powershapeTargets)
endif()
install(TARGETS powershape_op EXPORT ${op_export} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/powershape/powershape.h ${PROJECT_SOURCE_DIR}/include/powershape/powershape_abi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/powershape)
install(EXPORT powershapeTargets NAMESPACE powershape:: DESTINATION ${POWERSHAPE_CMAKE_DIR})
if(POWERSHAPE_CUDA)
  install(TARGETS powershape_kernels powershape_gpu EXPORT powershapeCudaTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT powershapeCudaTargets NAMESPACE powershape:: DESTINATION ${POWERSHAPE_CMAKE_DIR})
  install(TARGETS powershape_gpu_backend LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/powershape)
endif()
# Headers without CUDA in them; the kernels' .cuh stay private.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/powershape/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/powershape
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles DESTINATION ${CMAKE_INSTALL_DATADIR}/powershape)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/specs DESTINATION ${CMAKE_INSTALL_DATADIR}/powershape)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models DESTINATION ${CMAKE_INSTALL_DATADIR}/powershape)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data DESTINATION ${CMAKE_INSTALL_DATADIR}/powershape)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/powershapeConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/powershapeConfig.cmake
                              INSTALL_DESTINATION ${POWERSHAPE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/powershapeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/powershapeConfig.cmake ${CMAKE_BINARY_DIR}/powershapeConfigVersion.cmake
        DESTINATION ${POWERSHAPE_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/powershape.pc.in ${CMAKE_BINARY_DIR}/powershape.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/powershape.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Python package, beside the C library it loads (python/powershape/_lib.py finds it at
# lib/ three folders up): PYTHONPATH=P/lib/powershape/python.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/powershape DESTINATION ${CMAKE_INSTALL_LIBDIR}/powershape/python
        FILES_MATCHING PATTERN "*.py")

# Last, so that it runs after the archives are in place: CMake's --strip leaves static libraries
# alone; the debug information, not the code, is what made the install tree 120 MB.
if(POWERSHAPE_INSTALL_STRIP AND CMAKE_STRIP)
  install(CODE "
    file(GLOB archives \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libpowershape*.a\")
    foreach(a IN LISTS archives)
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${a}\" RESULT_VARIABLE rc)
      if(rc)
        message(FATAL_ERROR \"strip --strip-debug \${a} failed\")
      endif()
    endforeach()")
endif()
