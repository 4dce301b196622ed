# The installable package (docs/embedding.md):
#   cmake --install build --prefix PREFIX
# installs the static libraries ahbm::hw, ahbm::hw_bench (noc-bench, hbm-bench), ahbm::runtime (with
# ahbm::version), the ahbm-sim CLI,
# the headers under PREFIX/include/ahbm/ (included as "hw/..." and "runtime/..."), the shipped
# hardware configs, scenarios, model configs and their data files under PREFIX/share/ahbm/, and a CMake package:
#   find_package(ahbm CONFIG REQUIRED)   # with CMAKE_PREFIX_PATH=PREFIX
#   target_link_libraries(my_platform PRIVATE ahbm::hw)
# The build tree exports the same targets (build/ahbmTargets.cmake), and a project that adds this
# one with add_subdirectory() gets the same ahbm:: names through ALIAS targets.
include(CMakePackageConfigHelpers)

set(AHBM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ahbm)

# ahbm_warnings (-Wall -Wextra) is exported only because the static libraries name it as a
# private link dependency; it adds nothing to a consumer's compile.
set_target_properties(ahbm_warnings PROPERTIES EXPORT_NAME internal_warnings)
install(TARGETS ahbm_hw ahbm_hw_bench ahbm_runtime ahbm_version ahbm_warnings ahbm-sim EXPORT ahbmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY hw runtime DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ahbm
        FILES_MATCHING PATTERN "*.h" PATTERN configs EXCLUDE)
install(DIRECTORY hw/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ahbm/hw-configs)
# Every file under traces/, not only the JSON: a scenario or workload may name a data file beside it
# (serve/azure_sample.json reads azure_sample.csv); the package test checks each one is installed.
install(DIRECTORY traces/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ahbm/traces)
install(FILES LICENSE CHANGELOG.md CITATION.cff DESTINATION ${CMAKE_INSTALL_DOCDIR})

install(EXPORT ahbmTargets NAMESPACE ahbm:: DESTINATION ${AHBM_CMAKE_DIR})
export(EXPORT ahbmTargets NAMESPACE ahbm:: FILE ${CMAKE_BINARY_DIR}/ahbmTargets.cmake)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ahbmConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/ahbmConfig.cmake INSTALL_DESTINATION ${AHBM_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_DATADIR)
# 0.x: a new minor version may change the C++ API (CHANGELOG.md).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/ahbmConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/ahbmConfig.cmake ${CMAKE_BINARY_DIR}/package/ahbmConfigVersion.cmake
        DESTINATION ${AHBM_CMAKE_DIR})
