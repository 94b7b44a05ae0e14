# Script mode (cmake -P), run after a test executable is built: lists its GoogleTest suites and writes one
# CTest test per suite to OUTPUT. Inputs: EXECUTABLE, OUTPUT, TIMEOUT, COST, WORKING_DIRECTORY.
execute_process(
  COMMAND "${EXECUTABLE}" --gtest_list_tests
  OUTPUT_VARIABLE listing
  RESULT_VARIABLE status
  TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status})")
endif()
string(REPLACE ";" "" listing "${listing}")  # a list separator would split a line below
string(REPLACE "\n" ";" lines "${listing}")
set(content "")
foreach(line IN LISTS lines)
  # A suite line starts in column 0 and ends its name with '.'; test lines are indented.
  if(line MATCHES "^([^ ]+)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND content "add_test([==[${suite}]==] [==[${EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
           "set_tests_properties([==[${suite}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==]"
           " TIMEOUT ${TIMEOUT} COST ${COST})\n")
  endif()
endforeach()
if(content STREQUAL "")
  message(FATAL_ERROR "${EXECUTABLE} lists no GoogleTest suites")
endif()
file(WRITE "${OUTPUT}" "${content}")
