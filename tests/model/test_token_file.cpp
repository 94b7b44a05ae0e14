// The pre-tokenized file's reader against malformed files: each is a valid file (data.hpp's layout) with one
// thing broken by hand, and each must be refused with the exact one-line error naming the file and the
// problem, before a token reaches the model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "dataset_fixture.hpp"
#include "orbitlaw/model/data.hpp"

namespace orbitlaw::model {
namespace {

namespace fs = std::filesystem;

// 5 two-body sequences of 129 rows, 500 bins (vocabulary 503: pad token 502).
TokenizerConfig tokenizer() {
  TokenizerConfig tok;
  tok.bins = 500;
  tok.rows = 129;
  return tok;
}

class TokenFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("orbitlaw_token_file_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "train.tok").string();
    TokenStore::from_dataset(testing::two_body_dataset(), tokenizer(), 0, 5).save(path_);
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
    std::uint64_t header_length = 0;
    std::memcpy(&header_length, bytes_.data() + 8, 8);
    lengths_at_ = 16 + header_length;
    data_at_ = lengths_at_ + 5 * 4;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The file as `bytes` holds it; then the error of opening it ("(no error)" if it opens).
  std::string open_error(const std::string& bytes) const {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
    try {
      TokenStore::open_any(path_, tokenizer());
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  template <typename T>
  std::string with(std::size_t offset, T value) const {
    std::string bytes = bytes_;
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    return bytes;
  }
  // The offset of sequence i, row r, channel c (0: x, 1: y).
  std::size_t token_at(int i, int r, int c) const { return data_at_ + 2 * ((i * 129 + r) * 2 + c); }
  std::uint16_t token(int i, int r, int c) const {
    std::uint16_t t = 0;
    std::memcpy(&t, bytes_.data() + token_at(i, r, c), 2);
    return t;
  }
  // The file with its JSON header replaced by `header` (padded so the tokens stay aligned).
  std::string with_header(const Json& header) const {
    std::string text = header.dump();
    text.append((8 - (16 + text.size()) % 8) % 8, ' ');
    const std::uint64_t length = text.size();
    std::string bytes = bytes_.substr(0, 8);
    bytes.append(reinterpret_cast<const char*>(&length), 8);
    return bytes + text + bytes_.substr(lengths_at_);
  }
  Json header() const { return Json::parse(bytes_.substr(16, lengths_at_ - 16)); }
  std::string refused(const std::string& problem) const {
    return "pre-tokenized file '" + path_ + "' " + problem;
  }

  fs::path dir_;
  std::string path_, bytes_;
  std::size_t lengths_at_ = 0, data_at_ = 0;
};

TEST_F(TokenFile, TheUnbrokenFileOpens) { EXPECT_EQ(open_error(bytes_), "(no error)"); }

TEST_F(TokenFile, ATokenBeyondTheVocabularyIsRefused) {
  EXPECT_EQ(open_error(with(token_at(2, 5, 0), std::uint16_t{60000})),
            refused("holds token 60000 at sequence 2 row 5 x, beyond the vocabulary (503 tokens)"));
  EXPECT_EQ(open_error(with(token_at(4, 128, 1), std::uint16_t{503})),
            refused("holds token 503 at sequence 4 row 128 y, beyond the vocabulary (503 tokens)"));
}

TEST_F(TokenFile, ATokenOfTheVocabularyInTheWrongPlaceIsRefused) {
  EXPECT_EQ(open_error(with(token_at(0, 0, 1), std::uint16_t{3})),
            refused("holds token 3 at sequence 0 row 0 y, where only a cadence token may be"));
  EXPECT_EQ(open_error(with(token_at(1, 7, 0), std::uint16_t{502})),
            refused("holds token 502 at sequence 1 row 7 x, where only a coordinate bin may be"));
  // Sequence 3 said to end at row 100: its rows after that hold coordinates, not padding.
  EXPECT_EQ(open_error(with(lengths_at_ + 3 * 4, std::uint32_t{100})),
            refused("holds token " + std::to_string(token(3, 100, 0)) +
                    " at sequence 3 row 100 x, where only the pad token may be"));
}

TEST_F(TokenFile, ALengthOutsideTheRowsIsRefused) {
  EXPECT_EQ(open_error(with(lengths_at_ + 3 * 4, std::uint32_t{130})),
            refused("gives sequence 3 the length 130, outside 1..129"));
  EXPECT_EQ(open_error(with(lengths_at_, std::uint32_t{0})),
            refused("gives sequence 0 the length 0, outside 1..129"));
}

TEST_F(TokenFile, TruncatedFilesAreRefused) {
  const auto size = bytes_.size();
  EXPECT_EQ(open_error(bytes_.substr(0, size - 10)),
            refused("is truncated or corrupt (" + std::to_string(size - 10) + " bytes, expected " +
                    std::to_string(size) + ")"));
  EXPECT_EQ(open_error(bytes_.substr(0, 12)), refused("is truncated (12 bytes)"));
  // A header length near 2^64 once wrapped the bounds check around and read far past the mapping.
  EXPECT_EQ(open_error(with(8, ~std::uint64_t{0} - 7)), refused("is truncated"));
}

TEST_F(TokenFile, EveryHeaderRecordIsRequiredAndOfItsType) {
  for (const char* key : {"tokenizer", "sequences", "rows"}) {
    Json h = header();
    h.erase(key);
    EXPECT_EQ(open_error(with_header(h)), refused(std::string("has no '") + key + "' record in its header"));
  }
  for (const Json& n : {Json(-1), Json("5"), Json(5.5), Json(std::int64_t{1} << 40)}) {
    Json h = header();
    h["sequences"] = n;
    EXPECT_EQ(open_error(with_header(h)),
              refused("has a 'sequences' record that is not a count (" + n.dump() + ")"));
  }
  Json h = header();
  h["rows"] = 100;
  EXPECT_EQ(open_error(with_header(h)), refused("records 100 rows, but its tokenizer has 129"));
  h = header();
  h["tokenizer"]["bins"] = 1;
  EXPECT_EQ(open_error(with_header(h)).rfind(refused("holds an invalid tokenizer: "), 0), 0u)
      << open_error(with_header(h));
  EXPECT_EQ(open_error(with_header(Json::array({1}))), refused("has a corrupt header (not a JSON object)"));
  EXPECT_EQ(open_error(with_header(header())), "(no error)");  // the control: the same header rewritten
}

}  // namespace
}  // namespace orbitlaw::model
