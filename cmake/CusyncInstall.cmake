# The installed package: what `cmake --install` puts under <prefix>/lib/cmake/cusync so that another project can
#   find_package(cusync CONFIG REQUIRED)
#   target_link_libraries(kernels PRIVATE cusync::runtime)
#   cusync_generate_policies(kernels spec.dep)
# The targets themselves (the runtime headers, cusyncgen, cusync-tile-rewriter when built) join the export set
# cusyncTargets where they are defined; this file installs the set, the config and version files, and the CMake
# functions, which in the installed package run the installed tools (the imported cusync::cusyncgen and
# cusync::cusync-tile-rewriter). Not installed itself.
include(CMakePackageConfigHelpers)

set(CUSYNC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cusync)

install(EXPORT cusyncTargets NAMESPACE cusync:: DESTINATION ${CUSYNC_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cusyncConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/cusyncConfig.cmake
                              INSTALL_DESTINATION ${CUSYNC_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the runtime's interface, so only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cusyncConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cusyncConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/cusyncConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/CusyncGenerate.cmake
              ${CMAKE_CURRENT_LIST_DIR}/CusyncTileRewriter.cmake
        DESTINATION ${CUSYNC_INSTALL_CMAKEDIR})
