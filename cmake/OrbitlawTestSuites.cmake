# orbitlaw_discover_test_suites(TARGET [TIMEOUT s] [COST c]): one CTest test per GoogleTest suite of TARGET,
# named after the suite and running `TARGET --gtest_filter=<suite>.*`. Like gtest_discover_tests, the suites
# are listed by running the executable after each build (cmake/OrbitlawTestSuitesList.cmake writes the
# CTest file). A process per suite rather than per test: an executable that links LibTorch spends about half
# a second of CPU registering LibTorch's operators before its first test, which a process per test paid
# about 200 times over the whole suite.
set(_orbitlaw_suites_list_script "${CMAKE_CURRENT_LIST_DIR}/OrbitlawTestSuitesList.cmake")

function(orbitlaw_discover_test_suites target)
  cmake_parse_arguments(S "" "TIMEOUT;COST" "" ${ARGN})
  set(_listed "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  set(_include "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  add_custom_command(
    TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" "-DEXECUTABLE=$<TARGET_FILE:${target}>" "-DOUTPUT=${_listed}"
            "-DTIMEOUT=${S_TIMEOUT}" "-DCOST=${S_COST}" "-DWORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}"
            -P "${_orbitlaw_suites_list_script}"
    BYPRODUCTS "${_listed}"
    VERBATIM)
  # Before the first build there is no list: CTest then reports the executable as not built.
  file(WRITE "${_include}"
       "if(EXISTS \"${_listed}\")\n  include(\"${_listed}\")\nelse()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${_include}")
endfunction()
