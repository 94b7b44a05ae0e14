#pragma once
// The output discipline every subcommand follows, so that no command destroys what it did not create and no
// two runs share an output:
//  - a command never writes onto one of its inputs: outputs are compared with inputs by file identity (device
//    and inode, so a second name, a symlink or a hard link is caught), and an output inside an input folder
//    is refused;
//  - a file the command writes into an existing folder is replaced only when the folder is one the tool
//  wrote,
//    as its records there say (a completion, progress or provenance record, or the folder's lock record);
//  - every output file or output folder is held under an exclusive lock (flock) for the whole run; a second
//    run gets a one-line error naming the holder (its pid and command line, recorded in the lock file, which
//    stays in a folder as the record of the last run that wrote it);
//  - a run that fails leaves a finished run's folder as it found it: a completion record it removed is put
//    back when every output the record lists is still unchanged, and the files the failed run added are
//    removed with it; an output folder it created and wrote nothing into is removed.
// Inputs are declared before outputs, and outputs before any work, so that all of this is checked before an
// existing output is touched.
#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace orbitlaw {

class OutputGuard {
 public:
  // `command` names the subcommand in messages.
  explicit OutputGuard(std::string command);
  ~OutputGuard();  // releases the locks; without commit(), restores completion records as described above
  OutputGuard(const OutputGuard&) = delete;
  OutputGuard& operator=(const OutputGuard&) = delete;

  // A file or folder the command reads. A path that does not exist is ignored (its reader reports it).
  void input(const std::string& path);

  // A file the command writes: refused (Error) when it is one of the inputs, or lies inside an input folder.
  void output_file(const std::string& path) const;

  // output_file() for `path`, then the exclusive lock on it: `<path>.lock` beside it, removed when released.
  void lock_file(const std::string& path);

  // A folder the command writes, with the names of the files it writes there: refused when the folder is an
  // input or lies inside an input folder, when one of `names` inside it is an input, or when one of `names`
  // exists there and the folder has none of the tool's records (`records`, file names in it, or its lock
  // record). Creates the folder, takes its lock (a lock file inside it) and notes its completion records
  // (*.complete.json), which a failed run restores. With `lock` false (the non-writing ranks of a
  // data-parallel run, whose writer holds the lock and makes that check) only the identity checks are made.
  void output_folder(const std::string& dir, const std::vector<std::string>& names, bool lock = true,
                     const std::vector<std::string>& records = {});

  // The command succeeded: its outputs stay as written.
  void commit() { committed_ = true; }

  // The name of the lock file inside a locked output folder (readers of a folder may skip it).
  static const char* folder_lock_name();

 private:
  struct Input {
    std::string path;
    dev_t device;
    ino_t inode;
    bool folder;
  };
  struct Lock;
  // An output folder as the run found it: its entries, and the text of each completion record.
  struct FolderSnapshot {
    std::string dir;
    std::vector<std::string> entries;
    std::vector<std::pair<std::string, std::string>> records;  // file name, content
  };

  std::string command_;
  std::vector<Input> inputs_;
  std::vector<std::unique_ptr<Lock>> locks_;
  std::vector<FolderSnapshot> snapshots_;
  std::vector<std::string> created_;  // output folders this run created
  bool committed_ = false;

  void acquire(const std::string& lock_path, const std::string& what, bool remove_on_release);
  void restore(const FolderSnapshot& snapshot) const;
};

}  // namespace orbitlaw
