# The git revision is read at every build (not only at configure time), so a run's provenance names the
# commit the binary was built from. The generated file is rewritten only when its content changes.
set(ORBITLAW_BUILD_INFO_CPP "${CMAKE_BINARY_DIR}/generated/orbitlaw_build_info.cpp")
add_custom_target(orbitlaw_build_info_gen
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${ORBITLAW_BUILD_INFO_CPP}
          -DVERSION=${PROJECT_VERSION} -DCOMPILER=${CMAKE_CXX_COMPILER_ID}-${CMAKE_CXX_COMPILER_VERSION}
          -DBUILD_TYPE=${CMAKE_BUILD_TYPE} -P ${CMAKE_SOURCE_DIR}/cmake/WriteBuildInfo.cmake
  BYPRODUCTS ${ORBITLAW_BUILD_INFO_CPP}
  COMMENT "Recording git revision")
