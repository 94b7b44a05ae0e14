#pragma once
// Training data: tokenized sequences held as uint16 (in memory after tokenizing an HDF5 dataset, or memory-
// mapped from the pre-tokenized on-disk form for large runs), deterministic random batches, and a background
// prefetch thread so the model never waits on data.
#include <torch/torch.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model/tokenizer.hpp"

namespace orbitlaw::model {

// Pre-tokenized file: the 8 bytes "ORBTOK01", a little-endian uint64 header length, a JSON header
// {"format": "orbitlaw-tokens", "version": 1, "tokenizer": {...}, "sequences": N, "rows": R, "source": ...},
// then N uint32 sequence lengths, then N x R x 2 uint16 tokens (padded with the pad token).
inline constexpr char kTokenFileMagic[9] = "ORBTOK01";

class TokenStore {
 public:
  // Tokenizes systems [first, first + count) of an HDF5 trajectory dataset (count < 0: to the end).
  static TokenStore from_dataset(const std::string& path, const TokenizerConfig& tokenizer,
                                 std::int64_t first = 0, std::int64_t count = -1);
  // Memory-maps a pre-tokenized file; throws Error for a missing, truncated or foreign file.
  static TokenStore open(const std::string& path);
  // Opens either form, telling them apart by the magic bytes; a pre-tokenized file must have been made with
  // `tokenizer` (throws Error naming the difference otherwise).
  static TokenStore open_any(const std::string& path, const TokenizerConfig& tokenizer);
  static bool is_token_file(const std::string& path);

  // Writes the pre-tokenized form atomically.
  void save(const std::string& path) const;

  std::int64_t size() const { return static_cast<std::int64_t>(lengths_.size()); }
  int rows() const { return tokenizer_.rows; }
  int length(std::int64_t i) const { return static_cast<int>(lengths_[i]); }
  const std::uint16_t* tokens(std::int64_t i) const { return data_ + i * rows() * 2; }
  const TokenizerConfig& tokenizer() const { return tokenizer_; }
  // A subset of the sequences [first, first + count) sharing this store's memory.
  TokenStore slice(std::int64_t first, std::int64_t count) const;
  // Sequence i's first `length` positions as int64 [length, 2], padded with the pad token past its end.
  torch::Tensor sequence(std::int64_t i, int length) const;
  // The exact coordinates (AU) of the same positions, which only a store tokenized from an HDF5 dataset
  // holds (the regression head reads them): float64 [length, 2], NaN on the cadence row and past the end.
  bool has_coordinates() const { return coordinates_ != nullptr; }
  torch::Tensor coordinate_sequence(std::int64_t i, int length) const;
  // What the sequences hold, for the checkpoint's record of its training data: {"sequences", "cadences"
  // (years of each cadence token present), "cadence_sequences" {"week", "half_year"}}. A probe reads it to
  // refuse data from a cadence the model never saw.
  Json summary() const;

 private:
  TokenizerConfig tokenizer_;
  std::vector<std::uint32_t> lengths_;
  std::shared_ptr<void> owner_;  // keeps the memory (vector or mapping) alive
  const std::uint16_t* data_ = nullptr;
  std::shared_ptr<const std::vector<double>> coordinate_owner_;
  const double* coordinates_ = nullptr;  // [size, rows, 2] when held
};

// Batch `index` of a run: `batch_size` sequences drawn uniformly (with replacement) by a generator seeded
// from (seed, index) alone, so any batch can be reproduced without replaying the ones before it; the run's
// sampling state is therefore just the index of the next batch. Returns int64 [batch_size, length, 2]
// holding each sequence's first `length` positions (inputs are [:, :-1], targets [:, 1:]).
torch::Tensor sample_batch(const TokenStore& store, std::uint64_t seed, std::uint64_t index, int batch_size,
                           int length);
// The same sequences as sample_batch as exact coordinates, float64 [batch_size, length, 2] (NaN off
// coordinates); throws Error for a store without coordinates (a pre-tokenized file).
torch::Tensor sample_coordinate_batch(const TokenStore& store, std::uint64_t seed, std::uint64_t index,
                                      int batch_size, int length);

// Produces sample_batch(store, seed, first), (first + 1), ... (sample_coordinate_batch when `coordinates`) on
// a background thread, `depth` ahead.
class Prefetcher {
 public:
  Prefetcher(const TokenStore& store, std::uint64_t seed, std::uint64_t first, int batch_size, int length,
             int depth = 4, bool coordinates = false);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;
  torch::Tensor next();  // blocks until the next batch is ready
  std::uint64_t next_index() const { return next_index_; }

 private:
  void run();
  const TokenStore& store_;
  std::uint64_t seed_;
  int batch_size_, length_, depth_;
  bool coordinates_;
  std::uint64_t produce_index_, next_index_;
  std::deque<torch::Tensor> ready_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace orbitlaw::model
