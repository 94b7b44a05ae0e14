#pragma once
// libhdf5 keeps a file it failed to close (its metadata could not be written: a full disk) and then dies by
// SIGSEGV in its own teardown at exit (H5F__close_cb under H5close), after orbitlaw has reported the error.
// Once such a close has failed, skip_library_teardown_at_exit() makes the process end with its exit status
// before the shared libraries' destructors run (an on_exit handler: those run first). Stdio is flushed;
// the program's own static destructors are skipped too, which an exit after an error does not need.
namespace orbitlaw {

void skip_library_teardown_at_exit();

}  // namespace orbitlaw
