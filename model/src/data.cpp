#include "orbitlaw/model/data.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>

#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/checked_file.hpp"
#include "orbitlaw/common/progress.hpp"
#include "orbitlaw/common/random.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::model {

namespace {

constexpr const char* kTokenFormat = "orbitlaw-tokens";

struct Mapping {
  void* address = nullptr;
  std::size_t size = 0;
  ~Mapping() {
    if (address) munmap(address, size);
  }
};

}  // namespace

TokenStore TokenStore::from_dataset(const std::string& path, const TokenizerConfig& tokenizer,
                                    std::int64_t first, std::int64_t count) {
  tokenizer.validate();
  simulator::DatasetReader reader(path);
  const std::int64_t total = reader.num_systems();
  if (first < 0 || first > total)
    throw Error("dataset '" + path + "' has no system " + std::to_string(first));
  if (count < 0 || first + count > total) count = total - first;
  TokenStore store;
  store.tokenizer_ = tokenizer;
  const std::int64_t stride = static_cast<std::int64_t>(tokenizer.rows) * 2;
  auto buffer = std::make_shared<std::vector<std::uint16_t>>(
      count * stride, static_cast<std::uint16_t>(tokenizer.pad_token()));
  auto coordinates =
      std::make_shared<std::vector<double>>(count * stride, std::numeric_limits<double>::quiet_NaN());
  store.lengths_.resize(count);
  Progress progress("tokenize " + path, count, "systems");
  for (std::int64_t i = 0; i < count; ++i) {
    auto seq = encode(reader.read_system(first + i), tokenizer);
    const auto length = seq.tokens.size(0);
    auto t = seq.tokens.accessor<std::int64_t, 2>();
    auto xy = seq.coordinates.accessor<double, 2>();
    std::uint16_t* out = buffer->data() + i * stride;
    double* out_xy = coordinates->data() + i * stride;
    for (std::int64_t r = 0; r < length; ++r) {
      out[2 * r] = static_cast<std::uint16_t>(t[r][0]);
      out[2 * r + 1] = static_cast<std::uint16_t>(t[r][1]);
      out_xy[2 * r] = xy[r][0];
      out_xy[2 * r + 1] = xy[r][1];
    }
    store.lengths_[i] = static_cast<std::uint32_t>(length);
    progress.advance();
  }
  progress.finish();
  store.data_ = buffer->data();
  store.owner_ = buffer;
  store.coordinates_ = coordinates->data();
  store.coordinate_owner_ = coordinates;
  return store;
}

Json TokenStore::summary() const {
  std::int64_t week = 0, half_year = 0;
  for (std::int64_t i = 0; i < size(); ++i) {
    if (length(i) == 0) continue;
    week += tokens(i)[0] == tokenizer_.week_token();
    half_year += tokens(i)[0] == tokenizer_.half_year_token();
  }
  std::vector<double> cadences;
  if (week > 0) cadences.push_back(tokenizer_.week_cadence);
  if (half_year > 0) cadences.push_back(tokenizer_.half_year_cadence);
  return Json{{"sequences", size()},
              {"cadences", cadences},
              {"cadence_sequences", Json{{"week", week}, {"half_year", half_year}}}};
}

bool TokenStore::is_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  return in.read(magic, 8) && std::memcmp(magic, kTokenFileMagic, 8) == 0;
}

void TokenStore::save(const std::string& path) const {
  Json header{{"format", kTokenFormat},
              {"version", 1},
              {"tokenizer", tokenizer_.to_json()},
              {"sequences", size()},
              {"rows", rows()}};
  // Pad the header with spaces so the lengths and tokens after it are 8-byte aligned in the mapping.
  std::string text = header.dump();
  text.append((8 - (16 + text.size()) % 8) % 8, ' ');
  AtomicOutput out(path);
  CheckedFile file(out.temp_path(), CheckedFile::Mode::kTruncate, path);
  const std::uint64_t header_length = text.size();
  file.write(kTokenFileMagic, 8);
  file.write(&header_length, sizeof header_length);
  file.write(text);
  file.write(lengths_.data(), lengths_.size() * sizeof(std::uint32_t));
  file.write(data_, static_cast<std::size_t>(size() * rows() * 2) * sizeof(std::uint16_t));
  file.close();
  out.commit();
}

namespace {

[[noreturn]] void refuse_token_file(const std::string& path, const std::string& what) {
  throw Error("pre-tokenized file '" + path + "' " + what);
}

// The header's records, each required and of its type; the tokenizer must be a valid one and agree with
// the row count the header states.
TokenizerConfig read_token_header(const std::string& path, const char* text, std::uint64_t length,
                                  std::int64_t& sequences) {
  Json header;
  try {
    header = Json::parse(std::string(text, length));
  } catch (const Json::parse_error&) {
    refuse_token_file(path, "has a corrupt header");
  }
  if (!header.is_object()) refuse_token_file(path, "has a corrupt header (not a JSON object)");
  if (header.value("format", Json()) != kTokenFormat || header.value("version", Json()) != 1)
    refuse_token_file(path, "has an unknown format or version");
  for (const char* key : {"tokenizer", "sequences", "rows"})
    if (!header.contains(key))
      refuse_token_file(path, std::string("has no '") + key + "' record in its header");
  TokenizerConfig tokenizer;
  try {
    tokenizer = TokenizerConfig::from_json(header.at("tokenizer"));
  } catch (const Error& e) {
    refuse_token_file(path, std::string("holds an invalid tokenizer: ") + e.what());
  }
  const Json& n = header.at("sequences");
  if (!n.is_number_integer() || n < 0 || n > std::numeric_limits<std::int32_t>::max())
    refuse_token_file(path, "has a 'sequences' record that is not a count (" + n.dump() + ")");
  if (header.at("rows") != tokenizer.rows)
    refuse_token_file(path, "records " + header.at("rows").dump() + " rows, but its tokenizer has " +
                                std::to_string(tokenizer.rows));
  sequences = n.get<std::int64_t>();
  return tokenizer;
}

// Every sequence as the tokenizer writes it: a length in 1..rows, the cadence token in both channels of row
// 0, coordinate bins up to the length and the pad token after it. A token beyond the vocabulary would
// otherwise reach the embedding (a C++ backtrace), and one in the wrong place would train on nonsense.
void check_token_sequences(const std::string& path, const TokenizerConfig& tokenizer,
                           const std::vector<std::uint32_t>& lengths, const std::uint16_t* data) {
  const int rows = tokenizer.rows;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const std::string sequence = "sequence " + std::to_string(i);
    if (lengths[i] < 1 || lengths[i] > static_cast<std::uint32_t>(rows))
      refuse_token_file(path, "gives " + sequence + " the length " + std::to_string(lengths[i]) +
                                  ", outside 1.." + std::to_string(rows));
    const std::uint16_t* t = data + i * rows * 2;
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < 2; ++c) {
        const std::int64_t token = t[2 * r + c];
        const bool ok = r == 0 ? token == tokenizer.week_token() || token == tokenizer.half_year_token()
                        : r < static_cast<int>(lengths[i]) ? token < tokenizer.bins
                                                           : token == tokenizer.pad_token();
        if (ok) continue;
        const std::string where = sequence + " row " + std::to_string(r) + (c == 0 ? " x" : " y");
        if (token >= tokenizer.vocab())
          refuse_token_file(path, "holds token " + std::to_string(token) + " at " + where +
                                      ", beyond the vocabulary (" + std::to_string(tokenizer.vocab()) +
                                      " tokens)");
        refuse_token_file(path, "holds token " + std::to_string(token) + " at " + where + ", where only " +
                                    (r == 0                             ? "a cadence token"
                                     : r < static_cast<int>(lengths[i]) ? "a coordinate bin"
                                                                        : "the pad token") +
                                    " may be");
      }
    }
  }
}

}  // namespace

TokenStore TokenStore::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error("cannot open pre-tokenized file '" + path + "'");
  struct stat info {};
  ::fstat(fd, &info);
  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<std::size_t>(info.st_size);
  if (mapping->size >= 16) mapping->address = mmap(nullptr, mapping->size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mapping->address == MAP_FAILED) mapping->address = nullptr;
  const auto* bytes = static_cast<const char*>(mapping->address);
  if (!bytes) {
    if (is_token_file(path))
      refuse_token_file(path, "is truncated (" + std::to_string(mapping->size) + " bytes)");
    throw Error("'" + path + "' is not a pre-tokenized orbitlaw file");
  }
  if (std::memcmp(bytes, kTokenFileMagic, 8) != 0)
    throw Error("'" + path + "' is not a pre-tokenized orbitlaw file");
  std::uint64_t header_length = 0;
  std::memcpy(&header_length, bytes + 8, sizeof header_length);
  if (header_length > mapping->size - 16) refuse_token_file(path, "is truncated");
  TokenStore store;
  std::int64_t n = 0;
  store.tokenizer_ = read_token_header(path, bytes + 16, header_length, n);
  // In 64-bit arithmetic the sizes cannot overflow: n < 2^31 and rows < 2^31.
  const std::uint64_t lengths_at = 16 + header_length;
  const std::uint64_t data_at = lengths_at + n * sizeof(std::uint32_t);
  const std::uint64_t end =
      data_at + static_cast<std::uint64_t>(n) * store.rows() * 2 * sizeof(std::uint16_t);
  if (end != mapping->size)
    refuse_token_file(path, "is truncated or corrupt (" + std::to_string(mapping->size) +
                                " bytes, expected " + std::to_string(end) + ")");
  store.lengths_.resize(n);
  std::memcpy(store.lengths_.data(), bytes + lengths_at, n * sizeof(std::uint32_t));
  if (data_at % alignof(std::uint16_t) != 0) refuse_token_file(path, "is misaligned");
  store.data_ = reinterpret_cast<const std::uint16_t*>(bytes + data_at);
  check_token_sequences(path, store.tokenizer_, store.lengths_, store.data_);
  store.owner_ = mapping;
  return store;
}

TokenStore TokenStore::open_any(const std::string& path, const TokenizerConfig& tokenizer) {
  if (!is_token_file(path)) return from_dataset(path, tokenizer);
  TokenStore store = open(path);
  if (!(store.tokenizer() == tokenizer))
    throw Error("pre-tokenized file '" + path + "' was made with tokenizer " +
                store.tokenizer().to_json().dump() + ", but the run uses " + tokenizer.to_json().dump());
  return store;
}

TokenStore TokenStore::slice(std::int64_t first, std::int64_t count) const {
  TokenStore sub;
  sub.tokenizer_ = tokenizer_;
  sub.lengths_.assign(lengths_.begin() + first, lengths_.begin() + first + count);
  sub.owner_ = owner_;
  sub.data_ = data_ + first * rows() * 2;
  sub.coordinate_owner_ = coordinate_owner_;
  if (coordinates_) sub.coordinates_ = coordinates_ + first * rows() * 2;
  return sub;
}

torch::Tensor TokenStore::coordinate_sequence(std::int64_t i, int length) const {
  if (!coordinates_)
    throw Error(
        "this token store holds no coordinates (a pre-tokenized file): the regression head needs the "
        "HDF5 dataset");
  auto out = torch::full({length, 2}, std::numeric_limits<double>::quiet_NaN(), torch::kFloat64);
  const int n = std::min(length, std::min(this->length(i), rows()));
  std::copy_n(coordinates_ + i * rows() * 2, 2 * n, out.data_ptr<double>());
  return out;
}

torch::Tensor TokenStore::sequence(std::int64_t i, int length) const {
  auto out = torch::full({length, 2}, tokenizer_.pad_token(), torch::kInt64);
  auto o = out.accessor<std::int64_t, 2>();
  const std::uint16_t* t = tokens(i);
  const int n = std::min(length, std::min(this->length(i), rows()));
  for (int r = 0; r < n; ++r) {
    o[r][0] = t[2 * r];
    o[r][1] = t[2 * r + 1];
  }
  return out;
}

namespace {

// The sequences of batch `index`: the same on every machine and standard library, and independent of the
// other batches.
std::vector<std::int64_t> batch_sequences(const TokenStore& store, std::uint64_t seed, std::uint64_t index,
                                          int batch_size) {
  if (store.size() == 0) throw Error("no sequences to sample from");
  SplitMix64 rng(splitmix64_mix(seed ^ splitmix64_mix(index)));
  const auto n = static_cast<std::uint64_t>(store.size());
  std::vector<std::int64_t> chosen;
  for (int b = 0; b < batch_size; ++b) chosen.push_back(static_cast<std::int64_t>(rng.below(n)));
  return chosen;
}

}  // namespace

torch::Tensor sample_batch(const TokenStore& store, std::uint64_t seed, std::uint64_t index, int batch_size,
                           int length) {
  std::vector<torch::Tensor> rows;
  for (auto i : batch_sequences(store, seed, index, batch_size)) rows.push_back(store.sequence(i, length));
  return torch::stack(rows);
}

torch::Tensor sample_coordinate_batch(const TokenStore& store, std::uint64_t seed, std::uint64_t index,
                                      int batch_size, int length) {
  std::vector<torch::Tensor> rows;
  for (auto i : batch_sequences(store, seed, index, batch_size))
    rows.push_back(store.coordinate_sequence(i, length));
  return torch::stack(rows);
}

Prefetcher::Prefetcher(const TokenStore& store, std::uint64_t seed, std::uint64_t first, int batch_size,
                       int length, int depth, bool coordinates)
    : store_(store),
      seed_(seed),
      batch_size_(batch_size),
      length_(length),
      depth_(std::max(depth, 1)),
      coordinates_(coordinates),
      produce_index_(first),
      next_index_(first),
      worker_([this] { run(); }) {}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void Prefetcher::run() {
  try {
    while (true) {
      std::uint64_t index;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return stop_ || static_cast<int>(ready_.size()) < depth_; });
        if (stop_) return;
        index = produce_index_++;
      }
      auto batch = coordinates_ ? sample_coordinate_batch(store_, seed_, index, batch_size_, length_)
                                : sample_batch(store_, seed_, index, batch_size_, length_);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.push_back(std::move(batch));
      }
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    changed_.notify_all();
  }
}

torch::Tensor Prefetcher::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !ready_.empty() || error_; });
  if (ready_.empty() && error_) std::rethrow_exception(error_);
  auto batch = std::move(ready_.front());
  ready_.pop_front();
  ++next_index_;
  changed_.notify_all();
  return batch;
}

}  // namespace orbitlaw::model
