#pragma once
// Appends systems to a new dataset file in schema v1 (docs/dataset-format.md): flat, chunked, compressed
// arrays under /system, /body and /row, written in the order systems are appended.
#include <cstdint>
#include <memory>
#include <string>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::simulator {

class DatasetFileWriter {
 public:
  DatasetFileWriter(const std::string& path, int dim);
  ~DatasetFileWriter();
  DatasetFileWriter(const DatasetFileWriter&) = delete;
  DatasetFileWriter& operator=(const DatasetFileWriter&) = delete;

  void append(const System& system, std::int64_t index, int attempts);
  // Flushes buffered rows, writes the root attributes (strings, integers, floats; objects as JSON text)
  // and closes the file.
  void finish(const Json& attributes);
  std::int64_t systems() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orbitlaw::simulator
