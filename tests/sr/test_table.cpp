// Data tables: CSV and HDF5 columns by name, and one clear error for each kind of bad file.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

TEST(SrTable, CsvErrorsNameTheProblem) {
  EXPECT_EQ(error_of(write_file("unknown.csv", "r,m1\n1,2\n"), {"r", "m2"}),
            (fs::temp_directory_path() / "orbitlaw_sr_table_unknown.csv").string() +
                ": no column 'm2' (columns: r, m1)");
  EXPECT_NE(
      error_of(write_file("nan.csv", "r,m1\n1,2\n3,nan\n"), {"r", "m1"}).find("column 'm1' row 2 is NaN"),
      std::string::npos);
  EXPECT_NE(
      error_of(write_file("inf.csv", "r,m1\n1,inf\n"), {"r", "m1"}).find("column 'm1' row 1 is infinite"),
      std::string::npos);
  EXPECT_NE(error_of(write_file("short.csv", "r,m1\n1,2\n3\n"), {"r", "m1"})
                .find("line 3 has 1 fields but the header has 2"),
            std::string::npos);
  EXPECT_NE(error_of(write_file("text.csv", "r,m1\n1,abc\n"), {"r", "m1"}).find("'abc' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(write_file("empty.csv", ""), {"r"}).find("empty file"), std::string::npos);
  EXPECT_NE(error_of(write_file("header.csv", "r,m1\n"), {"r"}).find("no data rows"), std::string::npos);
  EXPECT_NE(error_of("/nonexistent/data.csv", {"r"}).find("cannot open data file '/nonexistent/data.csv'"),
            std::string::npos);
  EXPECT_NE(error_of(write_file("twice.csv", "r\n1\n"), {"r", "r"}).find("requested twice"),
            std::string::npos);
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
