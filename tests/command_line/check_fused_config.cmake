# Script mode: checks -DCONFIG=<fused configuration> as examples/gemm/CMakeLists.txt checks every entry of
# CUSYNC_FUSED_CONFIGS (cmake/CusyncFusedConfig.cmake); prints the verdict unwrapped (a FATAL_ERROR's text is wrapped
# at 80 columns) and exits 1 when the configuration is rejected.
#   cmake -DCONFIG=128,96,64,7,true -P check_fused_config.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/CusyncFusedConfig.cmake)
cusync_fused_config_error("${CONFIG}" error)
if(error)
  message(STATUS "${error}")
  message(FATAL_ERROR "rejected")
endif()
message(STATUS "fused configuration '${CONFIG}' accepted")
