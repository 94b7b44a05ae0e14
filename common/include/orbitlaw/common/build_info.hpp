#pragma once
// What this binary was built from; filled in at build time by cmake/WriteBuildInfo.cmake.
namespace orbitlaw {
const char* build_git_revision();
const char* build_version();
const char* build_compiler();
const char* build_type();
}  // namespace orbitlaw
