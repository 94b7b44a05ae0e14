// Reading named columns for symbolic regression from CSV (header row) or HDF5 (1-D datasets named by column).
// The CSV reader follows RFC 4180 as spreadsheets write it: an optional UTF-8 byte-order mark, quoted fields
// (with commas, line breaks and doubled quotes inside), CRLF or LF line ends, blank lines ignored. It reads
// its source once from the start, so a pipe (`-` for standard input, /dev/stdin, a FIFO) works as a file.
#include <H5Cpp.h>
#include <sys/stat.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/sr.hpp"

namespace orbitlaw::sr {
namespace {

const std::string kHdf5Magic("\x89HDF\r\n\x1a\n", 8);

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out.append(out.empty() ? "" : ", ").append(n);
  return out;
}

// A cell or name as an error message shows it: on one line (control bytes escaped) and at most 40 bytes, so
// that a binary file or a quoted line break cannot turn the one-line error into many.
std::string shown(const std::string& text) {
  std::string out;
  for (unsigned char c : text.substr(0, 40)) {
    if (c < 0x20 || c == 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return text.size() > 40 ? out + "..." : out;
}

struct Field {
  std::string text;
  bool quoted = false;
};

struct Record {
  long long line = 0;  // where the record starts (a quoted line break makes it span more)
  std::vector<Field> fields;
  bool blank() const { return fields.size() == 1 && !fields[0].quoted && fields[0].text.empty(); }
};

// Splits CSV text into records. Unquoted fields are trimmed of spaces and tabs; quoted ones keep their text.
class CsvSplitter {
 public:
  CsvSplitter(const std::string& text, const std::string& source) : text_(text), source_(source) {
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // the byte-order mark is not part of the header
  }

  bool next(Record& record) {
    if (pos_ >= text_.size()) return false;
    record = Record{line_, {}};
    while (true) {
      record.fields.push_back(field(record));
      if (pos_ >= text_.size()) return true;
      const char c = text_[pos_++];
      if (c == ',') continue;
      end_line(c);  // field() stops only at a comma, a line end or the end of the text
      return true;
    }
  }

 private:
  [[noreturn]] void fail(long long line, std::size_t column, const std::string& what) const {
    throw Error(source_ + " line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
                what);
  }
  void end_line(char c) {
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
    ++line_;
  }
  static bool is_space(char c) { return c == ' ' || c == '\t'; }
  void skip_spaces() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }

  Field field(const Record& record) {
    const std::size_t column = record.fields.size() + 1;
    skip_spaces();
    Field f;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      f.quoted = true;
      const long long opened = line_;
      ++pos_;
      while (true) {
        if (pos_ >= text_.size()) fail(opened, column, "the quoted field is never closed");
        const char c = text_[pos_++];
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            f.text += '"';  // "" inside quotes is one quote
            ++pos_;
            continue;
          }
          break;
        }
        if (c == '\n' || (c == '\r' && (pos_ >= text_.size() || text_[pos_] != '\n'))) ++line_;
        f.text += c;
      }
      skip_spaces();
      if (pos_ < text_.size() && !at_separator())
        fail(line_, column, "text after the closing quote (a quote inside a field is written \"\")");
      return f;
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !at_separator()) {
      if (text_[pos_] == '"') fail(line_, column, "a quote inside an unquoted field (quote the whole field)");
      ++pos_;
    }
    std::size_t end = pos_;
    while (end > start && is_space(text_[end - 1])) --end;
    f.text = text_.substr(start, end - start);
    return f;
  }
  bool at_separator() const {
    const char c = text_[pos_];
    return c == ',' || c == '\n' || c == '\r';
  }

  const std::string& text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  long long line_ = 1;  // a file of 2^31 blank lines fits in memory
};

// A cell as a number: the whole cell, in C notation whatever the locale (1.5, -2e-3, +4), finite.
double parse_cell(const Field& field, const std::string& where) {
  const std::string& text = field.text;
  if (text.empty()) throw Error(where + ": the cell is empty (expected a number)");
  const char* begin = text.data();
  const char* end = begin + text.size();
  // from_chars reads no plus sign; one is allowed in front of a digit or point, not of another sign.
  if (*begin == '+' && end - begin > 1 && begin[1] != '-') ++begin;
  double value = 0;
  const auto [stop, error] = std::from_chars(begin, end, value, std::chars_format::general);
  if (error == std::errc::result_out_of_range)
    throw Error(where + ": '" + shown(text) + "' is outside the range of a double");
  if (error != std::errc() || stop != end) throw Error(where + ": '" + shown(text) + "' is not a number");
  if (!std::isfinite(value)) throw Error(where + ": '" + shown(text) + "' is not finite");
  return value;
}

std::vector<std::string> read_header(CsvSplitter& splitter, Record& record, const std::string& source) {
  // Blank lines before the header are skipped like those between rows.
  while (splitter.next(record)) {
    if (!record.blank()) break;
  }
  if (record.fields.empty() || record.blank())
    throw Error(source + ": empty file (expected a CSV header row)");
  std::vector<std::string> header;
  for (std::size_t i = 0; i < record.fields.size(); ++i) {
    const std::string& name = record.fields[i].text;
    const std::string where =
        source + " line " + std::to_string(record.line) + ", column " + std::to_string(i + 1);
    if (name.empty()) throw Error(where + ": the header gives this column no name");
    // A repeated name would make a column's meaning depend on which copy the lookup finds first.
    for (std::size_t j = 0; j < i; ++j) {
      if (name == header[j]) {
        throw Error(where + ": the header names '" + shown(name) + "' again (first in column " +
                    std::to_string(j + 1) + ")");
      }
    }
    header.push_back(name);
  }
  return header;
}

Table parse_csv(const std::string& text, const std::string& source, const std::vector<std::string>& columns) {
  CsvSplitter splitter(text, source);
  Record record;
  const std::vector<std::string> header = read_header(splitter, record, source);
  std::vector<std::size_t> index;
  for (const auto& c : columns) {
    auto it = std::find(header.begin(), header.end(), c);
    if (it == header.end())
      throw Error(source + ": no column '" + shown(c) + "' (columns: " + shown(join_names(header)) + ")");
    index.push_back(static_cast<std::size_t>(it - header.begin()));
  }
  std::vector<double> values;  // row-major
  Eigen::Index rows = 0;
  while (splitter.next(record)) {
    if (record.blank()) continue;
    const std::string line = source + " line " + std::to_string(record.line);
    if (record.fields.size() != header.size()) {
      const bool short_row = record.fields.size() < header.size();
      const std::size_t column = std::min(record.fields.size(), header.size()) + 1;
      throw Error(line + ", column " + std::to_string(column) + ": the row has " +
                  std::to_string(record.fields.size()) + " fields but the header has " +
                  std::to_string(header.size()) +
                  (short_row ? " (no '" + shown(header[column - 1]) + "')" : ""));
    }
    for (std::size_t k = 0; k < index.size(); ++k) {
      const std::string where =
          line + ", column " + std::to_string(index[k] + 1) + " ('" + shown(columns[k]) + "')";
      values.push_back(parse_cell(record.fields[index[k]], where));
    }
    ++rows;
  }
  if (rows == 0) throw Error(source + ": no data rows");
  const auto cols = static_cast<Eigen::Index>(columns.size());
  return Table{columns,
               Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                   values.data(), rows, cols)};
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
    check_finite(t, path);
    return t;
  } catch (const H5::Exception& e) {
    throw Error(path + ": cannot read HDF5 (" + e.getDetailMsg() + ")");
  }
}

// The rest of a stream after `start`, read to its end: a pipe can be neither seeked nor sized.
std::string read_rest(std::istream& in, std::string start, const std::string& source) {
  start.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(source + ": read error");
  return start;
}

}  // namespace

Table read_table(const std::string& path, const std::vector<std::string>& columns) {
  if (columns.empty()) throw Error("no columns requested from " + path);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (columns[i] == columns[j]) throw Error("column '" + columns[i] + "' is requested twice");
    }
  }
  const bool standard_input = path == "-";
  const std::string source = standard_input ? "standard input" : path;
  std::error_code ec;
  if (!standard_input && std::filesystem::is_directory(path, ec))
    throw Error("data file '" + path + "' is a folder");
  std::ifstream file;
  if (!standard_input) {
    file.open(path, std::ios::binary);
    if (!file) throw Error("cannot open data file '" + path + "'");
  }
  std::istream& in = standard_input ? std::cin : file;
  // The first 8 bytes tell HDF5 from CSV; on a pipe they are kept, not read again.
  std::string start(8, '\0');
  in.read(start.data(), 8);
  start.resize(static_cast<std::size_t>(in.gcount()));
  if (start == kHdf5Magic) {
    struct stat info {};
    if (standard_input || ::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
      throw Error(source + ": HDF5 cannot be read from a pipe; give the file's name");
    return read_hdf5(path, columns);
  }
  in.clear();
  return parse_csv(read_rest(in, start, source), source, columns);
}

}  // namespace orbitlaw::sr
