// orbitlaw compare: compare the force laws recovered from several probe runs with Newton's. Writes Markdown
// and JSON: --out DIR (an existing folder or one ending in '/') gives DIR/compare.md and DIR/compare.json;
// otherwise --out PREFIX gives PREFIX.md and PREFIX.json.
#include <cstdio>
#include <filesystem>

#include "cli_common.hpp"
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/output_guard.hpp"
#include "orbitlaw/common/provenance.hpp"
#include "orbitlaw/probe/compare.hpp"

namespace orbitlaw::cli {

namespace {

const ConfigSchema<probe::CompareOptions>& compare_schema() {
  using C = probe::CompareOptions;
  static const auto schema =
      ConfigSchema<C>()
          .key("confidence", &C::confidence, "of the exponent intervals", Range::open(0, 1))
          .key("labels", &C::labels, "a label per run folder; empty: each run's model name");
  return schema;
}

}  // namespace

std::vector<KeyDoc> compare_config_keys() { return compare_schema().keys(probe::CompareOptions{}); }

void add_compare_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("compare", "Compare the force laws recovered from several runs with Newton's");
  auto& options = add_config_options(sub);
  static std::vector<std::string> runs;
  static std::string out;
  sub->add_option("runs", runs, "probe run folders (each with predictions.h5 and sr.json)")->required();
  sub->add_option("--out", out, "output folder or file prefix")->required();
  sub->callback([&options] {
    ConfigReader reader(options.load(), "compare config");
    const probe::CompareOptions compare = compare_schema().read(reader, probe::CompareOptions{});
    const bool is_dir = std::filesystem::is_directory(out) || (!out.empty() && out.back() == '/');
    std::filesystem::path prefix =
        is_dir ? std::filesystem::path(out) / "compare" : std::filesystem::path(out);
    const std::string md_path = prefix.string() + ".md";
    const std::string json_path = prefix.string() + ".json";
    // The probe folders are inputs as a whole: nothing is written into them.
    OutputGuard guard("compare");
    guard.input(options.config_path);
    for (const auto& run : runs) guard.input(run);
    if (is_dir) {
      guard.output_folder(out, {"compare.md", "compare.json"}, true, {"compare.json"});
    } else {
      guard.lock_file(json_path);
      guard.output_file(md_path);
    }
    const Json comparison = probe::compare_runs(runs, compare);
    Json record = comparison;
    record["provenance"] = provenance_record("compare", reader.resolved(), 0, library_versions());
    write_text_atomic(json_path, record.dump(2) + "\n");
    write_text_atomic(md_path,
                      "# Recovered force laws against Newton\n\n" + probe::compare_markdown(comparison));
    guard.commit();
    std::printf("%s\n%s\n", md_path.c_str(), json_path.c_str());
  });
}

}  // namespace orbitlaw::cli
