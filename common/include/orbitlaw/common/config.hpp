#pragma once
// Config files are JSON objects. Every subcommand reads its settings through ConfigReader, which knows the
// defaults, applies command-line overrides ("--set key=value", dotted keys for nested objects), and rejects
// keys it does not know, so a typo never silently falls back to a default.
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "orbitlaw/common/error.hpp"

namespace orbitlaw {

using Json = nlohmann::json;

// The most worker threads any stage starts: a larger count would only exhaust the machine (every thread has
// its own stack), and no machine this tool targets has that many cores.
inline constexpr int kMaxThreads = 1024;
// Throws Error "<what> must lie in [lowest, kMaxThreads] (got N)" for a thread count outside that range.
void require_thread_count(const std::string& what, int threads, int lowest);
// A configured thread count, where 0 means this process's share of the machine: OMP_NUM_THREADS when it is a
// positive count (a test runner that starts one process per core sets it to 1), every core otherwise. A
// process that took every core beside other jobs would oversubscribe the machine, and LibTorch's OpenMP
// workers, spinning at each barrier while another process holds their core, then run many times slower.
int resolve_thread_count(int threads);

// Parses JSON a user wrote (a config file, a --set value): a key given twice in one object, or nesting deeper
// than kMaxJsonDepth, is refused (nlohmann would keep the last of two keys without a word, and a nesting
// thousands deep overflows the stack of whatever walks it later). Throws Json::parse_error on a syntax error
// and Error, naming `what`, on the rest.
inline constexpr int kMaxJsonDepth = 64;
Json parse_user_json(const std::string& text, const std::string& what);

// Reads a JSON object from a file (parse_user_json); throws Error naming the file on a missing file, a parse
// error, a duplicate key or too deep a nesting.
Json load_json_file(const std::string& path);

// Applies overrides of the form "a.b.c=value". The value is parsed as JSON when it parses (numbers, true,
// [1,2]) and taken as a string otherwise. Throws Error on a malformed override.
void apply_overrides(Json& config, const std::vector<std::string>& overrides);

// Loads `path` (if not empty) and applies overrides: the usual first step of a subcommand.
Json load_config(const std::string& path, const std::vector<std::string>& overrides);

// Typed access to a config object with defaults, recording which keys were used. finish() throws Error if
// the object has a key nobody asked for. The resolved() object holds every setting actually in force,
// defaults included: it is what a run records next to its outputs.
class ConfigReader {
 public:
  explicit ConfigReader(Json config, std::string context = "config");

  template <class T>
  T get(const std::string& key, const T& default_value) {
    used_.insert(key);
    T value = default_value;
    if (config_.contains(key)) {
      // A number is not a boolean and a boolean is not a number: nlohmann would read true as 1.
      const Json& given = config_.at(key);
      if constexpr (std::is_arithmetic_v<T>) {
        if (std::is_same_v<T, bool> != given.is_boolean())
          throw Error(context_ + ": key '" + key + "' has the wrong type (" + given.dump() + ", expected " +
                      (std::is_same_v<T, bool> ? "true or false" : "a number") + ")");
      }
      // A whole-number setting takes only whole numbers it can hold: nlohmann's conversion would wrap
      // seed = -7 to 2^64 - 7 and truncate 2.5 to 2 without a word.
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) check_whole_number<T>(key);
      try {
        value = config_.at(key).get<T>();
      } catch (const std::exception&) {
        throw Error(context_ + ": key '" + key + "' has the wrong type (" + config_.at(key).dump() + ")");
      }
    }
    resolved_[key] = value;
    return value;
  }

  // A nested object, for sections such as "model": {...}. Its unknown keys are checked by its own finish().
  ConfigReader section(const std::string& key);
  // Records a finished section's resolved settings under `key`.
  void set_resolved(const std::string& key, const Json& value) { resolved_[key] = value; }

  bool has(const std::string& key) const { return config_.contains(key); }
  // How an error names `key` of this section: "train config: model.p" (the context, then the dotted key as
  // --set takes it).
  std::string name_of(const std::string& key) const {
    return root_ + ": " + (path_.empty() ? key : path_ + "." + key);
  }
  void finish() const;
  const Json& resolved() const { return resolved_; }

 private:
  template <class T>
  void check_whole_number(const std::string& key) const {
    const Json& v = config_.at(key);
    if (!v.is_number()) return;  // the type error is reported by get()
    bool fits = false;
    if (v.is_number_unsigned()) {
      fits = std::in_range<T>(v.get<std::uint64_t>());
    } else if (v.is_number_integer()) {
      fits = std::in_range<T>(v.get<std::int64_t>());
    } else {
      const double d = v.get<double>();
      fits = std::isfinite(d) && d == std::trunc(d) &&
             d >= static_cast<double>(std::numeric_limits<T>::min()) &&
             d <= static_cast<double>(std::numeric_limits<T>::max());
      if (fits) return;  // a whole number written as 3.0
    }
    if (!fits)
      throw Error(context_ + ": key '" + key + "' = " + v.dump() + " must be a whole number in [" +
                  std::to_string(std::numeric_limits<T>::min()) + ", " +
                  std::to_string(std::numeric_limits<T>::max()) + "]");
  }

  Json config_;
  std::string context_;  // root_, then ".section" for each level: the prefix of type errors
  std::string root_;     // the context the top-level reader was given ("train config")
  std::string path_;     // the dotted key of this section from the top ("model"), empty at the top
  std::set<std::string> used_;
  Json resolved_ = Json::object();
};

}  // namespace orbitlaw
