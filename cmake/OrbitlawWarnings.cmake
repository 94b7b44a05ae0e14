# Warnings are errors of taste: keep them at zero. orbitlaw_warnings is linked PRIVATE by every target of ours.
add_library(orbitlaw_warnings INTERFACE)
target_compile_options(orbitlaw_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor>)
if(ORBITLAW_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
