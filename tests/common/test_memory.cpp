#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "orbitlaw/common/memory.hpp"

#if defined(__GLIBC__)  // set by <cstdlib> above
#include <malloc.h>

// glibc serves a 16 MiB request with its own mmap by default (its threshold starts at 128 KiB);
// after retain_freed_memory() it comes from the heap, so the bytes held in mmapped blocks do not grow.
TEST(Memory, LargeBlocksComeFromTheHeapAndStayThere) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer serves malloc itself: glibc's heap statistics are not in play";
#endif
  constexpr std::size_t kBytes = 16u << 20;
  orbitlaw::retain_freed_memory();
  const auto mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(kBytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBytes);
  EXPECT_LT(mallinfo2().hblkhd, mapped_before + kBytes);
  std::free(block);
  // Freed, it stays in the heap for the next step instead of being trimmed back to the kernel.
  EXPECT_GE(mallinfo2().fordblks, kBytes);
}
#endif
