#pragma once
// Some damage to a file kills the process inside the C library that reads it (libhdf5's B-tree lookup:
// SIGSEGV) before anything can check it. A reader therefore runs `probe`, which reads what the reader is
// about to read, first in a forked child: a child killed by a signal gives Error("'<path>': <library>
// crashed reading it (signal N); the file is damaged"). A child that ends normally, with or without an
// error of its own, lets the caller go on (it meets any error itself). Costs one fork per file opened.
// `in_child` runs first in the child (to re-create a lock the forking thread held). Nested calls, made in
// the child, run nothing.
#include <functional>
#include <string>

namespace orbitlaw {

void crash_guard(const std::string& path, const std::string& library, const std::function<void()>& probe,
                 const std::function<void()>& in_child = nullptr);

}  // namespace orbitlaw
