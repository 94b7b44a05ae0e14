// Reading named columns for symbolic regression from CSV (header row) or HDF5 (1-D datasets named by column).
#include <H5Cpp.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

std::string trim(const std::string& s) {
  auto begin = s.find_first_not_of(" \t\r\"");
  if (begin == std::string::npos) return "";
  auto end = s.find_last_not_of(" \t\r\"");
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) out.push_back(trim(field));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out.append(out.empty() ? "" : ", ").append(n);
  return out;
}

bool is_hdf5(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in.gcount() == 8 && std::string(magic, 8) == std::string("\x89HDF\r\n\x1a\n", 8);
}

void check_finite(const Table& t, const std::string& path) {
  for (Eigen::Index j = 0; j < t.columns.cols(); ++j) {
    for (Eigen::Index i = 0; i < t.columns.rows(); ++i) {
      if (!std::isfinite(t.columns(i, j))) {
        throw Error(path + ": column '" + t.names[j] + "' row " + std::to_string(i + 1) + " is " +
                    (std::isnan(t.columns(i, j)) ? "NaN" : "infinite"));
      }
    }
  }
}

Table read_csv(const std::string& path, const std::vector<std::string>& columns) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || trim(line).empty())
    throw Error(path + ": empty file (expected a CSV header row)");
  const std::vector<std::string> header = split(line);
  // A repeated name would make a column's meaning depend on which copy the lookup finds first.
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i].empty()) throw Error(path + ": header column " + std::to_string(i + 1) + " has no name");
    for (std::size_t j = 0; j < i; ++j) {
      if (header[i] == header[j]) {
        throw Error(path + ": the header names column '" + header[i] + "' twice (columns " +
                    std::to_string(j + 1) + " and " + std::to_string(i + 1) + ")");
      }
    }
  }
  std::vector<int> index;
  for (const auto& c : columns) {
    auto it = std::find(header.begin(), header.end(), c);
    if (it == header.end())
      throw Error(path + ": no column '" + c + "' (columns: " + join_names(header) + ")");
    index.push_back(static_cast<int>(it - header.begin()));
  }
  std::vector<std::vector<double>> rows;
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (trim(line).empty()) continue;
    auto fields = split(line);
    if (fields.size() != header.size()) {
      throw Error(path + ": line " + std::to_string(line_number) + " has " + std::to_string(fields.size()) +
                  " fields but the header has " + std::to_string(header.size()));
    }
    std::vector<double> row;
    for (std::size_t k = 0; k < index.size(); ++k) {
      const std::string& text = fields[index[k]];
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0') {
        throw Error(path + ": line " + std::to_string(line_number) + " column '" + columns[k] + "': '" +
                    text + "' is not a number");
      }
      row.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw Error(path + ": no data rows");
  Table t{columns,
          Eigen::MatrixXd(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(columns.size()))};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < columns.size(); ++j) t.columns(i, j) = rows[i][j];
  }
  return t;
}

Table read_hdf5(const std::string& path, const std::vector<std::string>& columns) {
  H5::Exception::dontPrint();
  try {
    H5::H5File file(path, H5F_ACC_RDONLY);
    std::vector<std::vector<double>> data;
    for (const auto& c : columns) {
      if (!file.nameExists(c)) throw Error(path + ": no dataset '" + c + "'");
      H5::DataSet dataset = file.openDataSet(c);
      H5::DataSpace space = dataset.getSpace();
      if (space.getSimpleExtentNdims() != 1) {
        throw Error(path + ": dataset '" + c + "' has " + std::to_string(space.getSimpleExtentNdims()) +
                    " dimensions (expected a 1-D column)");
      }
      hsize_t n = 0;
      space.getSimpleExtentDims(&n);
      std::vector<double> values(n);
      if (n > 0) dataset.read(values.data(), H5::PredType::NATIVE_DOUBLE);
      if (!data.empty() && values.size() != data.front().size()) {
        throw Error(path + ": dataset '" + c + "' has " + std::to_string(values.size()) + " rows but '" +
                    columns.front() + "' has " + std::to_string(data.front().size()));
      }
      data.push_back(std::move(values));
    }
    if (data.empty() || data.front().empty()) throw Error(path + ": no data rows");
    Table t{columns, Eigen::MatrixXd(static_cast<Eigen::Index>(data.front().size()),
                                     static_cast<Eigen::Index>(columns.size()))};
    for (std::size_t j = 0; j < columns.size(); ++j) {
      t.columns.col(j) =
          Eigen::Map<const Eigen::VectorXd>(data[j].data(), static_cast<Eigen::Index>(data[j].size()));
    }
    return t;
  } catch (const H5::Exception& e) {
    throw Error(path + ": cannot read HDF5 (" + e.getDetailMsg() + ")");
  }
}

}  // namespace

Table read_table(const std::string& path, const std::vector<std::string>& columns) {
  if (columns.empty()) throw Error("no columns requested from " + path);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (columns[i] == columns[j]) throw Error("column '" + columns[i] + "' is requested twice");
    }
  }
  if (!std::ifstream(path)) throw Error("cannot open data file '" + path + "'");
  Table t = is_hdf5(path) ? read_hdf5(path, columns) : read_csv(path, columns);
  check_finite(t, path);
  return t;
}

}  // namespace orbitlaw::sr
