// Data tables: CSV and HDF5 columns by name, and one clear error for each kind of bad file.
#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace sr = orbitlaw::sr;
namespace fs = std::filesystem;

namespace {

fs::path write_file(const std::string& name, const std::string& content) {
  fs::path path = fs::temp_directory_path() / ("orbitlaw_sr_table_" + name);
  std::ofstream(path) << content;
  return path;
}

std::string error_of(const fs::path& path, const std::vector<std::string>& columns) {
  try {
    sr::read_table(path.string(), columns);
  } catch (const orbitlaw::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(SrTable, ReadsCsvColumnsByName) {
  auto path = write_file("good.csv", "F, r ,m1,m2,extra\n1.5,2,3,4,x\n\n-2.5e-3,0.5,1e-4,1e-2,y\n");
  sr::Table t = sr::read_table(path.string(), {"r", "m2", "F"});
  ASSERT_EQ(t.columns.rows(), 2);
  ASSERT_EQ(t.columns.cols(), 3);
  EXPECT_EQ(t.columns(0, 0), 2);
  EXPECT_EQ(t.columns(0, 1), 4);
  EXPECT_EQ(t.columns(1, 2), -2.5e-3);
  EXPECT_EQ(t.columns(1, 1), 1e-2);
}

TEST(SrTable, CsvErrorsNameFileLineAndColumn) {
  struct Case {
    std::string file, content;
    std::vector<std::string> columns;
    std::string error;  // after the file's path
  };
  const std::vector<Case> cases = {
      {"unknown.csv", "r,m1\n1,2\n", {"r", "m2"}, ": no column 'm2' (columns: r, m1)"},
      {"nan.csv", "r,m1\n1,2\n3,nan\n", {"r", "m1"}, " line 3, column 2 ('m1'): 'nan' is not finite"},
      {"inf.csv", "r,m1\n1,-inf\n", {"r", "m1"}, " line 2, column 2 ('m1'): '-inf' is not finite"},
      {"huge.csv",
       "r,m1\n1,1e400\n",
       {"m1"},
       " line 2, column 2 ('m1'): '1e400' is outside the range of a double"},
      {"short.csv",
       "r,m1\n1,2\n3\n",
       {"r", "m1"},
       " line 3, column 2: the row has 1 fields but the header has 2 (no 'm1')"},
      {"long.csv", "r,m1\n1,2,3\n", {"r"}, " line 2, column 3: the row has 3 fields but the header has 2"},
      {"text.csv", "r,m1\n1,abc\n", {"r", "m1"}, " line 2, column 2 ('m1'): 'abc' is not a number"},
      {"hex.csv", "r\n0x10\n", {"r"}, " line 2, column 1 ('r'): '0x10' is not a number"},
      {"signs.csv", "r\n+-1\n", {"r"}, " line 2, column 1 ('r'): '+-1' is not a number"},
      {"blank.csv", "r,m1\n1,\n", {"m1"}, " line 2, column 2 ('m1'): the cell is empty (expected a number)"},
      // A quoted line break in a bad cell is shown escaped: the error stays on one line.
      {"break.csv", "r\n\"1\n2\"\n", {"r"}, " line 2, column 1 ('r'): '1\\x0a2' is not a number"},
      // Found by tests/fuzz (csv-74a63aa327): a lone CR inside a row is a line end (as old Mac files
      // have), not a byte printed raw into the error, which split it in two on a terminal.
      {"cr.csv", "r,m1\n1,2e\x93[\r3\n", {"r", "m1"}, " line 2, column 2 ('m1'): '2e\x93[' is not a number"},
      {"cr-row.csv",
       "r,m1\n1,2\r3\n",
       {"r", "m1"},
       " line 3, column 2: the row has 1 fields but the header has 2 (no 'm1')"},
      // csv-20c9c982fc: the same through the header's names.
      {"cr-name.csv", "\"a\rb\",m1\n1,2\n", {"r"}, ": no column 'r' (columns: a\\x0db, m1)"},
      {"dup.csv",
       "r,m1,r\n1,2,3\n",
       {"m1"},
       " line 1, column 3: the header names 'r' again (first in column 1)"},
      {"noname.csv", "r,,m1\n1,2,3\n", {"m1"}, " line 1, column 2: the header gives this column no name"},
      {"open.csv", "r,m1\n1,\"2\n", {"m1"}, " line 2, column 2: the quoted field is never closed"},
      {"after.csv",
       "r,m1\n1,\"2\"x\n",
       {"m1"},
       " line 2, column 2: text after the closing quote (a quote inside a field is written \"\")"},
      {"stray.csv",
       "r,m1\n1,2\"\n",
       {"m1"},
       " line 2, column 2: a quote inside an unquoted field (quote the whole field)"},
      {"empty.csv", "", {"r"}, ": empty file (expected a CSV header row)"},
      {"bom-only.csv", "\xEF\xBB\xBF\r\n\r\n", {"r"}, ": empty file (expected a CSV header row)"},
      {"header.csv", "r,m1\n\n", {"r"}, ": no data rows"},
  };
  for (const auto& c : cases) {
    const fs::path path = write_file(c.file, c.content);
    EXPECT_EQ(error_of(path, c.columns), path.string() + c.error) << c.file;
  }
  EXPECT_EQ(error_of("/nonexistent/data.csv", {"r"}), "cannot open data file '/nonexistent/data.csv'");
  EXPECT_EQ(error_of(fs::temp_directory_path(), {"r"}),
            "data file '" + fs::temp_directory_path().string() + "' is a folder");
  EXPECT_EQ(error_of(write_file("twice.csv", "r\n1\n"), {"r", "r"}), "column 'r' is requested twice");
}

// What spreadsheets write: a byte-order mark, CRLF, quoted names and cells with commas, doubled quotes and
// line breaks, a plus sign, blank lines at the end.
TEST(SrTable, ReadsCsvAsSpreadsheetsWriteIt) {
  auto path = write_file("excel.csv",
                         "\xEF\xBB\xBF\"r\",\"note, with comma\",\"m1\"\r\n"
                         "1.5,\"say \"\"hi\"\", twice\",\"+2e3\"\r\n"
                         "\r\n"
                         " 2 ,\"two\r\nlines\", -0.25 \r\n"
                         "\r\n\r\n");
  sr::Table t = sr::read_table(path.string(), {"m1", "r"});
  ASSERT_EQ(t.columns.rows(), 2);
  EXPECT_EQ(t.columns(0, 0), 2000);
  EXPECT_EQ(t.columns(0, 1), 1.5);
  EXPECT_EQ(t.columns(1, 0), -0.25);
  EXPECT_EQ(t.columns(1, 1), 2);
  // The line numbers after a quoted line break count the file's lines.
  auto bad = write_file("excel-bad.csv", "\xEF\xBB\xBFr,note\r\n1,\"a\r\nb\"\r\nx,c\r\n");
  EXPECT_EQ(error_of(bad, {"r"}), bad.string() + " line 4, column 1 ('r'): 'x' is not a number");
  // The quoted text is the cell: a quoted header name with a comma is one column.
  auto quoted = write_file("quoted.csv", "\"a,b\",c\n1,2\n");
  EXPECT_EQ(sr::read_table(quoted.string(), {"a,b"}).columns(0, 0), 1);
}

// A pipe can be read once, from its start, and neither seeked nor sized: the reader must not reopen it.
TEST(SrTable, ReadsCsvFromAPipe) {
  const fs::path fifo = fs::temp_directory_path() / "orbitlaw_sr_table_fifo";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << "x,y\n1,2\n3,4\n"; });
  sr::Table t = sr::read_table(fifo.string(), {"y", "x"});
  writer.join();
  ASSERT_EQ(t.columns.rows(), 2);
  EXPECT_EQ(t.columns(1, 0), 4);
  EXPECT_EQ(t.columns(1, 1), 3);
  // HDF5 needs to seek: on a pipe it is refused in one line, not misread as CSV.
  std::thread h5_writer(
      [&] { std::ofstream(fifo, std::ios::binary) << std::string("\x89HDF\r\n\x1a\n\0\0", 10); });
  EXPECT_EQ(error_of(fifo, {"x"}), fifo.string() + ": HDF5 cannot be read from a pipe; give the file's name");
  h5_writer.join();
  fs::remove(fifo);
}

// `-` is standard input, read like any pipe.
TEST(SrTable, ReadsCsvFromStandardInput) {
  std::istringstream csv("\xEF\xBB\xBFx,y\r\n1,2\r\n");
  std::streambuf* saved = std::cin.rdbuf(csv.rdbuf());
  sr::Table t = sr::read_table("-", {"y"});
  EXPECT_EQ(t.columns(0, 0), 2);
  std::istringstream bad("x,y\n1,z\n");
  std::cin.rdbuf(bad.rdbuf());
  EXPECT_EQ(error_of("-", {"y"}), "standard input line 2, column 2 ('y'): 'z' is not a number");
  std::istringstream h5(std::string("\x89HDF\r\n\x1a\n", 8));
  std::cin.rdbuf(h5.rdbuf());
  EXPECT_EQ(error_of("-", {"y"}), "standard input: HDF5 cannot be read from a pipe; give the file's name");
  std::cin.rdbuf(saved);
}

TEST(SrTable, RefusesColumnNamesALawCannotHold) {
  EXPECT_NO_THROW(sr::check_variable_names({"r", "m_1", "_x2", "Mass"}));
  for (const std::string bad : {"r-1", "1r", "m 1", "", "r.x", "\xCF\x81"}) {
    try {
      sr::check_variable_names({"r", bad});
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const orbitlaw::Error& e) {
      EXPECT_EQ(std::string(e.what()), "the column name '" + bad +
                                           "' cannot be written in a law; rename it to letters, digits and _ "
                                           "(starting with a letter or _)");
    }
  }
  // The search refuses it too, before any work.
  Eigen::MatrixXd X = Eigen::MatrixXd::Ones(10, 1);
  Eigen::VectorXd y = Eigen::VectorXd::Ones(10);
  EXPECT_THROW(sr::search(X, y, {"r-1"}, sr::Options{}), orbitlaw::Error);
}

TEST(SrTable, ReadsHdf5DatasetsAndRejectsBadOnes) {
  fs::path path = fs::temp_directory_path() / "orbitlaw_sr_table.h5";
  {
    H5::H5File file(path.string(), H5F_ACC_TRUNC);
    auto write = [&](const std::string& name, const std::vector<double>& v) {
      hsize_t n = v.size();
      H5::DataSpace space(1, &n);
      file.createDataSet(name, H5::PredType::NATIVE_DOUBLE, space)
          .write(v.data(), H5::PredType::NATIVE_DOUBLE);
    };
    write("r", {1, 2, 3});
    write("F", {0.5, 0.25, 0.125});
    write("short", {1, 2});
    write("bad", {1, NAN, 3});
    hsize_t dims[2] = {2, 2};
    H5::DataSpace space2(2, dims);
    double m[4] = {1, 2, 3, 4};
    file.createDataSet("matrix", H5::PredType::NATIVE_DOUBLE, space2).write(m, H5::PredType::NATIVE_DOUBLE);
  }
  sr::Table t = sr::read_table(path.string(), {"r", "F"});
  ASSERT_EQ(t.columns.rows(), 3);
  EXPECT_EQ(t.columns(2, 0), 3);
  EXPECT_EQ(t.columns(1, 1), 0.25);
  EXPECT_NE(error_of(path, {"r", "m1"}).find("no dataset 'm1'"), std::string::npos);
  EXPECT_NE(error_of(path, {"r", "short"}).find("dataset 'short' has 2 rows but 'r' has 3"),
            std::string::npos);
  EXPECT_NE(error_of(path, {"r", "bad"}).find("column 'bad' row 2 is NaN"), std::string::npos);
  EXPECT_NE(error_of(path, {"matrix"}).find("has 2 dimensions"), std::string::npos);
}
