#include "orbitlaw/common/crash_guard.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw {

void crash_guard(const std::string& path, const std::string& library, const std::function<void()>& probe,
                 const std::function<void()>& in_child) {
  static bool is_child = false;
  if (is_child) return;
  std::fflush(nullptr);  // the child ends with _exit; nothing buffered may be written twice
  const pid_t child = ::fork();
  if (child < 0) return;  // no guard rather than no reading
  if (child == 0) {
    is_child = true;
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // a crash here is expected, not worth a core file
    for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(signal, SIG_DFL);
    try {
      if (in_child) in_child();
      probe();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    // The signal's number only: its description ("Segmentation fault") reads like the crash itself.
    throw Error("'" + path + "': " + library + " crashed reading it (signal " +
                std::to_string(WTERMSIG(status)) + "); the file is damaged");
  }
}

}  // namespace orbitlaw
