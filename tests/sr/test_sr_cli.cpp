// `orbitlaw sr` as a user runs it: a CSV of Newtonian forces in, the front printed and written out with
// provenance; bad data gives one line naming the problem and leaves no output files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../cli/cli_runner.hpp"
#include "feynman_data.hpp"
#include "orbitlaw/common/config.hpp"

namespace fs = std::filesystem;
using orbitlaw::test::run_orbitlaw;

namespace {

fs::path scratch_dir() {
  fs::path dir = fs::temp_directory_path() / "orbitlaw_sr_cli";
  fs::create_directories(dir);
  return dir;
}

fs::path write_newton_csv() {
  auto d = orbitlaw::sr::test::sample("39.47841760435743*m1*m2/r^2",
                                      {{"r", 0.3, 40}, {"m1", 1e-4, 1e-2, true}, {"m2", 1e-4, 1e-2, true}},
                                      200, 1);
  fs::path path = scratch_dir() / "newton.csv";
  std::ofstream out(path);
  out.precision(17);
  out << "r,m1,m2,F\n";
  for (int i = 0; i < d.X.rows(); ++i)
    out << d.X(i, 0) << "," << d.X(i, 1) << "," << d.X(i, 2) << "," << d.y[i] << "\n";
  return path;
}

}  // namespace

TEST(SrCli, FindsNewtonAndWritesFrontWithProvenance) {
  fs::path data = write_newton_csv();
  fs::path prefix = scratch_dir() / "run" / "newton";
  fs::remove_all(prefix.parent_path());
  auto r =
      run_orbitlaw("sr --data " + data.string() + " --x r,m1,m2 --y F --loss log --seed 1 --max-size 15" +
                   " --iterations 60 --set target_loss=1e-20 --set populations=4 --set population_size=30" +
                   " --out " + prefix.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best:     39.4784*m1*m2/r^2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("accuracy:"), std::string::npos) << r.output;
  std::ifstream json_file(prefix.string() + ".front.json");
  ASSERT_TRUE(json_file.good());
  orbitlaw::Json j = orbitlaw::Json::parse(json_file);
  int best = j["best"];
  EXPECT_EQ(j["front"][best]["text"], "39.4784*m1*m2/r^2");
  EXPECT_EQ(j["provenance"]["seed"], 1);
  EXPECT_EQ(j["provenance"]["config"]["loss"], "log");
  std::ifstream csv(prefix.string() + ".front.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "complexity,loss,holdout_loss,score,selection,expression");
  EXPECT_TRUE(fs::exists(prefix.parent_path() / "sr.provenance.json"));
}

TEST(SrCli, DefaultLossIsChosenFromTheDataAndRecorded) {
  // The forces span several decades and are all positive: the default loss is the log loss, and both the
  // printout and the front's JSON say it was chosen automatically.
  fs::path data = write_newton_csv();
  fs::path prefix = scratch_dir() / "auto" / "newton";
  fs::remove_all(prefix.parent_path());
  auto r = run_orbitlaw("sr --data " + data.string() + " --x r,m1,m2 --y F --iterations 3" +
                        " --set populations=2 --set population_size=10 --out " + prefix.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("loss log (chosen by auto)"), std::string::npos) << r.output;
  std::ifstream json_file(prefix.string() + ".front.json");
  ASSERT_TRUE(json_file.good());
  orbitlaw::Json j = orbitlaw::Json::parse(json_file);
  EXPECT_EQ(j["loss"], "log");
  EXPECT_EQ(j["loss_chosen_by"], "auto");
  EXPECT_EQ(j["provenance"]["config"]["loss"], "auto");
}

TEST(SrCli, CheckRoundsConstantsAsAskedBeforeJudging) {
  // SRBench's rule rounds the found law's constants to 3 digits, so a cube root found to full precision
  // (0.3333333333333333) becomes 0.333 and no longer equals the target's 1/3 across m1's two decades;
  // with 17 digits nothing is rounded and the same law is judged equal (ratio 3^(-1/3)).
  const std::string check = "sr --data " + write_newton_csv().string() +
                            " --x r,m1,m2 --y F --check '0.6933612743506348*r*m1^0.3333333333333333' " +
                            "--target 'r*m1^(1/3)'";
  auto srbench = run_orbitlaw(check);
  ASSERT_EQ(srbench.exit_code, 0) << srbench.output;
  EXPECT_NE(srbench.output.find("\"equivalent\":false"), std::string::npos) << srbench.output;
  auto full = run_orbitlaw(check + " --significant-digits 17");
  ASSERT_EQ(full.exit_code, 0) << full.output;
  EXPECT_NE(full.output.find("\"equivalent\":true"), std::string::npos) << full.output;
  EXPECT_NE(full.output.find("\"relation\":\"ratio\""), std::string::npos) << full.output;
}

// A spreadsheet's CSV (byte-order mark, CRLF, quoted names) read from standard input, as `--data -`.
TEST(SrCli, ReadsASpreadsheetCsvFromStandardInput) {
  auto d = orbitlaw::sr::test::sample("2.5*x^2", {{"x", 0.5, 4}}, 40, 3);
  fs::path path = scratch_dir() / "excel.csv";
  {
    std::ofstream out(path, std::ios::binary);
    out.precision(17);
    out << "\xEF\xBB\xBF\"x\",\"note, quoted\",\"y\"\r\n";
    for (int i = 0; i < d.X.rows(); ++i) out << d.X(i, 0) << ",\"a \"\"b\"\"\"," << d.y[i] << "\r\n";
    out << "\r\n";
  }
  auto r = run_orbitlaw("sr --data - --x x --y y --seed 1 --iterations 30 < " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sr: 40 rows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best:     2.5*x^2"), std::string::npos) << r.output;
}

TEST(SrCli, BadDataIsOneLineErrorAndNoOutput) {
  fs::path dir = scratch_dir();
  auto write = [&](const std::string& name, const std::string& content) {
    fs::path p = dir / name;
    std::ofstream(p) << content;
    return p.string();
  };
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {"--data " + write("nan.csv", "r,F\n1,2\n2,nan\n") + " --x r --y F",
       "nan.csv line 3, column 2 ('F'): 'nan' is not finite"},
      {"--data " + write("inf.csv", "r,F\n1,inf\n") + " --x r --y F",
       "inf.csv line 2, column 2 ('F'): 'inf' is not finite"},
      {"--data " + write("empty.csv", "") + " --x r --y F", "empty file"},
      {"--data " + write("header.csv", "r,F\n") + " --x r --y F", "no data rows"},
      {"--data " + write("ragged.csv", "r,F\n1,2\n3\n") + " --x r --y F",
       "ragged.csv line 3, column 2: the row has 1 fields but the header has 2 (no 'F')"},
      {"--data " + write("r-1.csv", "r-1,F\n1,2\n") + " --x r-1 --y F",
       "the column name 'r-1' cannot be written in a law"},
      {"--data " + write("ok.csv", "r,F\n1,2\n") + " --x r,m1 --y F", "no column 'm1' (columns: r, F)"},
      {"--data " + dir.string() + "/ok.csv --x r --y F --loss cubic",
       "loss must be one of: auto, l2, l1, relative, log, thresholded_l1 (got 'cubic')"},
      {"--data " + dir.string() + "/ok.csv --x r --y F --operators +,tan", "unknown operator 'tan'"},
      {"--x r --y F", "sr needs a data file (--data FILE)"},
      {"--data " + dir.string() + "/ok.csv --y F", "sr needs input columns"},
      {"--data " + dir.string() + "/ok.csv --x r --y F --set populations=0",
       "sr config: populations must be at least 1 (got 0)"},
      {"--data " + dir.string() + "/ok.csv --x r --y F --set max_sise=3", "unknown key 'max_sise'"},
  };
  for (const auto& c : cases) {
    fs::path prefix = dir / "bad" / "out";
    fs::remove_all(prefix.parent_path());
    auto r = run_orbitlaw("sr " + c.args + " --out " + prefix.string());
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.output;
    EXPECT_EQ(r.lines(), 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(prefix.string() + ".front.json")) << c.args;
  }
}
