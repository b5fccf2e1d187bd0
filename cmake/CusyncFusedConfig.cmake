# Checks one fused-chain configuration string, as examples/gemm/CMakeLists.txt's CUSYNC_FUSED_CONFIGS and
# CUSYNC_SWIGLU_FUSED_CONFIGS hold them: "TileM,TileN,TileK,Stages,Cooperative[,ClusterRows[,SecondTileN[,staged|
# cutlass[,SecondTileK[,SecondStages]]]]]". Every field but the 5th (true or false) and the 8th (staged or cutlass)
# is a positive integer. Why: a typo would otherwise surface as a template error in the generated instance, minutes
# into the build, far from the cache variable that caused it.
#
#   cusync_fused_config_error(<config> <out-var>)   sets <out-var> to what is wrong, or to "" when nothing is
#   cusync_check_fused_config(<config>)             stops configuring with that message
function(cusync_fused_config_error config out_var)
  set(${out_var} "" PARENT_SCOPE)
  string(REPLACE "," ";" fields "${config}")
  list(LENGTH fields field_count)
  if(field_count LESS 5 OR field_count GREATER 10)
    set(${out_var} "fused configuration '${config}': 5 to 10 fields, not ${field_count}" PARENT_SCOPE)
    return()
  endif()
  set(field_number 0)
  foreach(field IN LISTS fields)
    math(EXPR field_number "${field_number} + 1")
    if(field_number EQUAL 5)
      if(NOT field MATCHES "^(true|false)$")
        set(${out_var} "fused configuration '${config}': the 5th field (Cooperative) is true or false, not '${field}'"
            PARENT_SCOPE)
        return()
      endif()
    elseif(field_number EQUAL 8)
      if(NOT field MATCHES "^(staged|cutlass)$")
        set(${out_var} "fused configuration '${config}': the 8th field is staged or cutlass, not '${field}'"
            PARENT_SCOPE)
        return()
      endif()
    elseif(NOT field MATCHES "^[1-9][0-9]*$")
      set(${out_var} "fused configuration '${config}': field ${field_number} is a positive integer, not '${field}'"
          PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

function(cusync_check_fused_config config)
  cusync_fused_config_error("${config}" error)
  if(error)
    message(FATAL_ERROR "${error}")
  endif()
endfunction()
