#include "orbitlaw/common/output_guard.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/checked_file.hpp"
#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/provenance.hpp"
#include "orbitlaw/common/stage_record.hpp"

namespace orbitlaw {

namespace fs = std::filesystem;

namespace {

const char* const kFolderLockName = ".orbitlaw.lock";

bool identity(const std::string& path, dev_t& device, ino_t& inode) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  device = st.st_dev;
  inode = st.st_ino;
  return true;
}

// The folders that hold `path`, innermost first, as far as they exist (symlinks resolved, so that a second
// name for an input folder is recognised by identity below).
std::vector<std::string> existing_ancestors(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path).lexically_normal();
  std::vector<std::string> out;
  for (fs::path a = p.parent_path(); !a.empty(); a = a.parent_path()) {
    if (fs::exists(a, ec)) out.push_back(a.string());
    if (a == a.root_path()) break;
  }
  return out;
}

const char* const kLockFormat = "orbitlaw-output-lock";

// What a lock file records of its holder, on one line.
std::string read_holder(const std::string& lock_path) {
  // The holder writes its record just after taking the lock; a reader that comes in between waits briefly.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::ifstream in(lock_path);
    std::string line;
    std::getline(in, line);
    const Json record = Json::parse(line, nullptr, false);
    if (!record.is_discarded() && record.is_object() && record.value("format", "") == kLockFormat) {
      return "pid " + std::to_string(record.value("pid", 0LL)) + ": " + record.value("command_line", "");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return "a process that has not yet recorded itself";
}

// A record the tool writes, in JSON: a completion or progress record or an output folder's lock record (their
// "format"), or a provenance record of `command`, alone or inside a result.
bool is_tool_record(const std::string& path, const std::string& command) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  const Json record = Json::parse(text.str(), nullptr, false);
  if (record.is_discarded() || !record.is_object()) return false;
  const std::string format = record.value("format", "");
  if (format.rfind("orbitlaw-", 0) == 0) return true;
  if (record.value("stage", "") == command) return true;
  const auto provenance = record.find("provenance");
  return provenance != record.end() && provenance->is_object() && provenance->value("stage", "") == command;
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every output a completion record lists is present with the checksum it records.
bool outputs_unchanged(const std::string& dir, const std::string& record_text) {
  const Json record = Json::parse(record_text, nullptr, false);
  if (record.is_discarded() || !record.is_object() || !record.contains("outputs") ||
      !record["outputs"].is_object())
    return false;
  for (const auto& [name, expected] : record["outputs"].items()) {
    const std::string file = (fs::path(dir) / name).string();
    if (!fs::is_regular_file(file) || !expected.is_object()) return false;
    try {
      if (file_checksum(file) != expected.value("checksum", "")) return false;
    } catch (const Error&) {
      return false;
    }
  }
  return true;
}

}  // namespace

struct OutputGuard::Lock {
  int fd = -1;
  std::string path;
  bool remove = true;  // a file's lock goes when released; a folder's stays as the record of who wrote it
  ~Lock() {
    // Removed while still held, and only when the name is still this lock's file: a run waiting on the same
    // name then finds its file gone and takes a fresh one (acquire() checks), so two runs never both hold.
    struct stat held {
    }, named{};
    if (remove && ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino)
      ::unlink(path.c_str());
    ::close(fd);
  }
};

OutputGuard::OutputGuard(std::string command) : command_(std::move(command)) {}

OutputGuard::~OutputGuard() {
  if (!committed_) {
    for (const auto& snapshot : snapshots_) restore(snapshot);
    // A folder this failed run created and left holding nothing but its lock record goes with the run, so
    // that a refused command leaves no trace.
    for (const auto& dir : created_) {
      const auto entries = entries_of(dir);
      if (entries.size() > 1 || (entries.size() == 1 && entries.front() != kFolderLockName)) continue;
      std::error_code ec;
      fs::remove(fs::path(dir) / kFolderLockName, ec);  // while still held: see Lock
      locks_.clear();
      fs::remove(dir, ec);
    }
  }
  locks_.clear();
}

const char* OutputGuard::folder_lock_name() { return kFolderLockName; }

void OutputGuard::input(const std::string& path) {
  if (path.empty()) return;
  Input in{path, 0, 0, false};
  if (!identity(path, in.device, in.inode)) return;
  std::error_code ec;
  in.folder = fs::is_directory(path, ec);
  inputs_.push_back(in);
}

void OutputGuard::output_file(const std::string& path) const {
  dev_t device = 0;
  ino_t inode = 0;
  if (identity(path, device, inode)) {
    for (const auto& in : inputs_) {
      if (in.device == device && in.inode == inode) {
        throw Error(command_ + ": the output '" + path + "' is the input '" + in.path +
                    "' (writing it would destroy the input); choose another output");
      }
    }
  }
  for (const auto& folder : existing_ancestors(path)) {
    if (!identity(folder, device, inode)) continue;
    for (const auto& in : inputs_) {
      if (in.folder && in.device == device && in.inode == inode) {
        throw Error(command_ + ": the output '" + path + "' lies inside the input folder '" + in.path +
                    "'; choose an output outside it");
      }
    }
  }
}

void OutputGuard::lock_file(const std::string& path) {
  output_file(path);
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw Error("cannot create directory '" + parent.string() + "': " + ec.message());
  }
  acquire(path + ".lock", "the output '" + path + "'", true);
}

void OutputGuard::output_folder(const std::string& dir, const std::vector<std::string>& names, bool lock,
                                const std::vector<std::string>& records) {
  dev_t device = 0;
  ino_t inode = 0;
  if (identity(dir, device, inode)) {
    for (const auto& in : inputs_) {
      if (in.device == device && in.inode == inode) {
        throw Error(command_ + ": the output folder '" + dir + "' is the input '" + in.path +
                    "'; choose another output");
      }
    }
  }
  output_file(dir);  // inside an input folder?
  for (const auto& name : names) output_file((fs::path(dir) / name).string());
  std::error_code ec;
  if (lock) {
    // A file this command writes may be replaced only in a folder that a run of the tool wrote, as one of its
    // records there says; a user's folder that happens to hold such a name is left alone.
    std::vector<std::string> candidates = records;
    candidates.emplace_back(kFolderLockName);
    bool recognised = false;
    for (const auto& record : candidates)
      recognised = recognised || is_tool_record((fs::path(dir) / record).string(), command_);
    for (const auto& name : names) {
      if (!recognised && fs::exists(fs::path(dir) / name, ec)) {
        throw Error(
            command_ + ": '" + dir + "' holds " + name +
            ", which no orbitlaw run wrote there (the folder has none of its records); choose another "
            "output");
      }
    }
  }
  if (!fs::exists(dir, ec)) created_.push_back(dir);
  fs::create_directories(dir, ec);
  if (ec) throw Error(command_ + ": cannot create the output folder '" + dir + "': " + ec.message());
  if (!lock) return;
  acquire((fs::path(dir) / kFolderLockName).string(), "the output folder '" + dir + "'", false);
  FolderSnapshot snapshot{dir, entries_of(dir), {}};
  for (const auto& name : snapshot.entries) {
    const fs::path file = fs::path(dir) / name;
    if (name.size() <= 14 || name.compare(name.size() - 14, 14, ".complete.json") != 0) continue;
    if (!fs::is_regular_file(file, ec)) continue;
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (in) snapshot.records.emplace_back(name, text.str());
  }
  snapshots_.push_back(std::move(snapshot));
}

void OutputGuard::acquire(const std::string& lock_path, const std::string& what, bool remove_on_release) {
  // A few rounds at most: each retry means a holder released and removed the file between our open and flock.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot open the lock file '" + lock_path + "': " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK) {
        throw Error(command_ + ": " + what + " is in use by another run (" + read_holder(lock_path) +
                    "); wait for it to end or choose another output");
      }
      throw Error("cannot lock '" + lock_path + "': " + std::strerror(error));
    }
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) != 0 || ::stat(lock_path.c_str(), &named) != 0 || held.st_dev != named.st_dev ||
        held.st_ino != named.st_ino) {
      ::close(fd);
      continue;
    }
    auto lock = std::make_unique<Lock>();
    lock->fd = fd;
    lock->path = lock_path;
    lock->remove = remove_on_release;
    const std::string holder =
        Json{{"format", kLockFormat},
             {"command", command_},
             {"pid", static_cast<long long>(::getpid())},
             {"command_line", one_line(command_line().empty() ? command_ : command_line())}}
            .dump() +
        "\n";
    if (::ftruncate(fd, 0) != 0)
      throw Error("cannot write the lock file '" + lock_path + "': " + std::strerror(errno));
    write_all(fd, holder.data(), holder.size(), "the lock file '" + lock_path + "'");
    locks_.push_back(std::move(lock));
    return;
  }
  throw Error("cannot lock '" + lock_path + "': it keeps being replaced");
}

void OutputGuard::restore(const FolderSnapshot& snapshot) const {
  // Called from the destructor: nothing may escape.
  try {
    bool restored = false;
    for (const auto& [name, text] : snapshot.records) {
      const std::string path = (fs::path(snapshot.dir) / name).string();
      if (fs::exists(path) || !outputs_unchanged(snapshot.dir, text)) continue;
      write_text_atomic(path, text);
      restored = true;
    }
    if (!restored) return;
    // The finished run's folder again: what this run added there (a progress record, say) goes with it.
    for (const auto& name : entries_of(snapshot.dir)) {
      if (name == kFolderLockName ||
          std::binary_search(snapshot.entries.begin(), snapshot.entries.end(), name))
        continue;
      std::error_code ec;
      fs::remove_all(fs::path(snapshot.dir) / name, ec);
    }
  } catch (const std::exception&) {
  }
}

}  // namespace orbitlaw
