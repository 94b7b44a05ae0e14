# Warnings are errors of taste: keep them at zero. orbitlaw_warnings is linked PRIVATE by every target of ours.
add_library(orbitlaw_warnings INTERFACE)
target_compile_options(orbitlaw_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor>)
if(ORBITLAW_SANITIZE)
  # The sanitizers' instrumentation changes what GCC 12's flow-based warnings see, and they report false
  # positives inside LibTorch's and libstdc++'s headers (optional<Tensor> members "maybe uninitialized",
  # std::string concatenation "array bounds"); GCC's manual warns of this. The instrumented build itself is
  # what finds real out-of-bounds and uninitialized accesses, so those warnings are off here.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized$<SEMICOLON>-Wno-array-bounds$<SEMICOLON>-Wno-stringop-overflow$<SEMICOLON>-Wno-stringop-overread$<SEMICOLON>-Wno-restrict>)
  add_link_options(-fsanitize=address,undefined)
endif()
