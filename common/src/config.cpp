#include "orbitlaw/common/config.hpp"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

namespace orbitlaw {

Json parse_user_json(const std::string& text, const std::string& what) {
  std::vector<std::set<std::string>> keys;  // the keys seen in each open object
  const Json::parser_callback_t check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth > kMaxJsonDepth)
      throw Error(what + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (event == Json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == Json::parse_event_t::key && !keys.empty()) {
      const std::string name = parsed.get<std::string>();
      if (!keys.back().insert(name).second) throw Error(what + " gives the key '" + name + "' twice");
    }
    return true;
  };
  return Json::parse(text, check);
}

Json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open config file '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  Json parsed;
  try {
    parsed = parse_user_json(buffer.str(), "config file '" + path + "'");
  } catch (const Json::exception& e) {  // syntax errors, and numbers beyond double's range
    throw Error("config file '" + path + "' is not valid JSON: " + std::string(e.what()));
  }
  if (!parsed.is_object()) throw Error("config file '" + path + "' must hold a JSON object");
  return parsed;
}

void apply_overrides(Json& config, const std::vector<std::string>& overrides) {
  for (const auto& item : overrides) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("override '" + item + "' is not of the form key=value");
    std::string key = item.substr(0, eq);
    std::string text = item.substr(eq + 1);
    Json value;
    try {
      value = parse_user_json(text, "override '" + item + "'");
    } catch (const Json::parse_error&) {
      value = text;  // a bare word such as lssar is a string
    } catch (const Json::out_of_range&) {
      throw Error("override '" + item + "': the number is out of range");
    }
    Json* node = &config;
    std::size_t start = 0;
    while (true) {
      auto dot = key.find('.', start);
      std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (part.empty()) throw Error("override '" + item + "' has an empty key part");
      if (dot == std::string::npos) {
        (*node)[part] = value;
        break;
      }
      if (!node->contains(part)) (*node)[part] = Json::object();
      node = &(*node)[part];
      if (!node->is_object()) throw Error("override '" + item + "': '" + part + "' is not a section");
      start = dot + 1;
    }
  }
}

Json load_config(const std::string& path, const std::vector<std::string>& overrides) {
  Json config = path.empty() ? Json::object() : load_json_file(path);
  apply_overrides(config, overrides);
  return config;
}

ConfigReader::ConfigReader(Json config, std::string context)
    : config_(std::move(config)), context_(std::move(context)), root_(context_) {
  if (!config_.is_object()) throw Error(context_ + " must be a JSON object");
}

ConfigReader ConfigReader::section(const std::string& key) {
  used_.insert(key);
  Json sub = config_.contains(key) ? config_.at(key) : Json::object();
  if (!sub.is_object()) throw Error(context_ + ": key '" + key + "' must be an object");
  ConfigReader reader(sub, context_ + "." + key);
  reader.root_ = root_;
  reader.path_ = path_.empty() ? key : path_ + "." + key;
  return reader;
}

void ConfigReader::finish() const {
  for (auto it = config_.begin(); it != config_.end(); ++it) {
    if (!used_.count(it.key())) throw Error(context_ + ": unknown key '" + it.key() + "'");
  }
}

void require_thread_count(const std::string& what, int threads, int lowest) {
  if (threads < lowest || threads > kMaxThreads) {
    throw Error(what + " must lie in [" + std::to_string(lowest) + ", " + std::to_string(kMaxThreads) +
                "] (got " + std::to_string(threads) + ")");
  }
}

int resolve_thread_count(int threads) {
  if (threads > 0) return threads;
  if (const char* value = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && n > 0 && n <= kMaxThreads) return static_cast<int>(n);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace orbitlaw
