// orbitlaw report: writes the Markdown/HTML report of an experiment run folder. The plots are made with
// matplotlib, so the work is done by experiments/report.py in the project's Python environment; this
// subcommand finds both and checks the run folder first, so a user gets a one-line error, not a traceback.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_common.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"

namespace orbitlaw::cli {

namespace {
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// ORBITLAW_PYTHON / ORBITLAW_REPORT_SCRIPT override the locations recorded at build time.
std::string from_env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}
}  // namespace

void add_report_command(CLI::App& app) {
  auto* sub = app.add_subcommand("report", "Write the Markdown/HTML report of an experiment run folder");
  static std::string run_dir;
  static std::string out_dir;
  sub->add_option("run", run_dir, "experiment run folder (holds experiment.json)")->required();
  sub->add_option("--out", out_dir, "report folder (default RUN/report)");
  sub->callback([] {
    namespace fs = std::filesystem;
    if (!fs::is_directory(run_dir)) throw Error("run folder '" + run_dir + "' does not exist");
    if (!fs::exists(fs::path(run_dir) / "experiment.json")) {
      throw Error("'" + run_dir + "' is not an experiment run folder (no experiment.json)");
    }
    std::string python = from_env_or("ORBITLAW_PYTHON", ORBITLAW_SOURCE_DIR "/.venv/bin/python");
    std::string script = from_env_or("ORBITLAW_REPORT_SCRIPT", ORBITLAW_SOURCE_DIR "/experiments/report.py");
    if (!fs::exists(script))
      throw Error("report script '" + script + "' not found (set ORBITLAW_REPORT_SCRIPT)");
    if (!fs::exists(python)) python = "python3";
    // The run folder's records and stage folders are read; the report folder (RUN/report by default) is the
    // one place written. The script itself refuses a folder that holds files no report wrote.
    OutputGuard guard("report");
    for (const char* name : {"experiment.json", "provenance.json"})
      guard.input((fs::path(run_dir) / name).string());
    for (const char* name : {"configs", "data", "models", "probe", "logs", "stages", "compare"})
      guard.input((fs::path(run_dir) / name).string());
    const std::string out = out_dir.empty() ? (fs::path(run_dir) / "report").string() : out_dir;
    // Which files of an existing report folder a report wrote, the script decides from its report.json.
    guard.output_folder(out, {});
    for (const char* name : {"laws.md", "report.md", "report.html", "report.json"})
      guard.output_file((fs::path(out) / name).string());
    std::string command = shell_quote(python) + " " + shell_quote(script) + " --run " + shell_quote(run_dir) +
                          " --out " + shell_quote(out);
    // The script's output is captured so that a failure reads as one line, like every other subcommand's: the
    // script prints "report: error: ..." as its last line (and a Python traceback ends with its message).
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) throw Error("cannot run the report script '" + script + "'");
    std::string output;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
    const int status = pclose(pipe);
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      guard.commit();
      std::fputs(output.c_str(), stdout);
      return;
    }
    std::string last;
    std::size_t end = output.find_last_not_of(" \n\r\t");
    if (end != std::string::npos) {
      const std::size_t begin = output.rfind('\n', end);
      last = output.substr(begin == std::string::npos ? 0 : begin + 1,
                           end + 1 - (begin == std::string::npos ? 0 : begin + 1));
    }
    const std::string prefix = "report: error: ";
    if (last.rfind(prefix, 0) == 0) last = last.substr(prefix.size());
    throw Error("report for '" + run_dir + "' failed: " + (last.empty() ? "the report script died" : last));
  });
}

}  // namespace orbitlaw::cli
