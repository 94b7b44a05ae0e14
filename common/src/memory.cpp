#include "orbitlaw/common/memory.hpp"

#include <cstdlib>  // defines __GLIBC__ when the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace orbitlaw {

void retain_freed_memory() {
#if defined(__GLIBC__)
  // Blocks up to 32 MiB (the largest threshold glibc accepts on 64-bit) come from the heap, not a fresh
  // mmap, and the heap is trimmed only when 256 MiB lie free at its top: buffers are reused step after step.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace orbitlaw
