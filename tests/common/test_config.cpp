#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "orbitlaw/common/config.hpp"

using orbitlaw::ConfigReader;
using orbitlaw::Error;
using orbitlaw::Json;

TEST(Config, DefaultsOverridesAndResolved) {
  Json config = Json::parse(R"({"steps": 10, "model": {"kind": "softmax"}})");
  orbitlaw::apply_overrides(config, {"steps=25", "model.kind=lssar", "model.p=3", "name=run one"});
  ConfigReader reader(config);
  EXPECT_EQ(reader.get<int>("steps", 1), 25);
  EXPECT_EQ(reader.get<double>("lr", 6e-4), 6e-4);
  EXPECT_EQ(reader.get<std::string>("name", ""), "run one");
  auto model = reader.section("model");
  EXPECT_EQ(model.get<std::string>("kind", "softmax"), "lssar");
  EXPECT_EQ(model.get<int>("p", 15), 3);
  model.finish();
  reader.finish();
  EXPECT_EQ(reader.resolved()["lr"].get<double>(), 6e-4);  // defaults are recorded too
}

TEST(Config, UnknownKeyIsAnErrorNamingTheKey) {
  ConfigReader reader(Json::parse(R"({"stpes": 10})"), "train config");
  reader.get<int>("steps", 1);
  try {
    reader.finish();
    FAIL() << "unknown key accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'stpes'"), std::string::npos) << e.what();
  }
}

TEST(Config, WrongTypeIsAnError) {
  ConfigReader reader(Json::parse(R"({"steps": "many"})"));
  EXPECT_THROW(reader.get<int>("steps", 1), Error);
}

// Values are what they say: a boolean is no number (nlohmann reads true as 1) and a number no boolean.
TEST(Config, BooleansAndNumbersAreNotEachOther) {
  Json config = Json::object();
  orbitlaw::apply_overrides(config, {"steps=true", "lr=false", "quiet=1", "fused=true"});
  ConfigReader reader(config, "train config");
  for (const char* key : {"steps", "lr"}) {
    try {
      key == std::string("steps") ? (void)reader.get<int>(key, 1) : (void)reader.get<double>(key, 0.1);
      FAIL() << key << ": a boolean was read as a number";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("key '" + std::string(key) + "' has the wrong type"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(reader.get<bool>("quiet", false), Error);
  EXPECT_TRUE(reader.get<bool>("fused", false));
}

// A key given twice keeps neither silently, and nesting is bounded before anything walks it.
TEST(Config, DuplicateKeysAndDeepNestingAreRefused) {
  auto path = std::filesystem::temp_directory_path() / "orbitlaw_duplicate_config.json";
  std::ofstream(path) << R"({"train": {"max_steps": 3, "lr": 0.1, "max_steps": 5}})";
  try {
    orbitlaw::load_json_file(path.string());
    FAIL() << "a duplicate key was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gives the key 'max_steps' twice"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  // The same key in two different objects is no duplicate.
  std::ofstream(path) << R"({"a": {"k": 1}, "b": {"k": 2}, "k": 3})";
  EXPECT_EQ(orbitlaw::load_json_file(path.string())["b"]["k"], 2);
  std::ofstream(path) << std::string(200000, '[') + std::string(200000, ']');
  EXPECT_THROW(orbitlaw::load_json_file(path.string()), Error);
  std::ofstream(path) << "{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_THROW(orbitlaw::load_json_file(path.string()), Error);
  Json config = Json::object();
  EXPECT_THROW(
      orbitlaw::apply_overrides(config, {"x=" + std::string(100000, '[') + std::string(100000, ']')}), Error);
  EXPECT_THROW(orbitlaw::apply_overrides(config, {R"(x={"a": 1, "a": 2})"}), Error);
  std::filesystem::remove(path);
}

TEST(Config, MalformedOverridesAndFiles) {
  Json config = Json::object();
  EXPECT_THROW(orbitlaw::apply_overrides(config, {"novalue"}), Error);
  EXPECT_THROW(orbitlaw::apply_overrides(config, {"=3"}), Error);
  EXPECT_THROW(orbitlaw::apply_overrides(config, {"a..b=3"}), Error);
  EXPECT_THROW(orbitlaw::apply_overrides(config, {"limit=1e999"}), Error);  // beyond double: not "internal"
  EXPECT_THROW(orbitlaw::load_json_file("/nonexistent/config.json"), Error);
  auto path = std::filesystem::temp_directory_path() / "orbitlaw_bad_config.json";
  std::ofstream(path) << "{\"steps\": 10,";
  EXPECT_THROW(orbitlaw::load_json_file(path.string()), Error);
  std::ofstream(path) << "{\"steps\": 1e999}";
  EXPECT_THROW(orbitlaw::load_json_file(path.string()), Error);
  std::ofstream(path) << "[1, 2]";
  EXPECT_THROW(orbitlaw::load_json_file(path.string()), Error);
  std::filesystem::remove(path);
}

// Whole-number keys take only whole numbers they can hold: nlohmann's own conversion would wrap -7 to
// 2^64 - 7 for an unsigned key, and truncate 2.5 or 1e10 for an int key without a word.
TEST(Config, WholeNumbersAreCheckedNotWrappedOrTruncated) {
  orbitlaw::ConfigReader r(
      orbitlaw::Json{{"seed", -7}, {"steps", 2.5}, {"big", 1e10}, {"three", 3.0}, {"ok", 12}, {"neg", -3}});
  EXPECT_THROW(r.get<std::uint64_t>("seed", 0), orbitlaw::Error);
  EXPECT_THROW(r.get<int>("steps", 0), orbitlaw::Error);
  EXPECT_THROW(r.get<int>("big", 0), orbitlaw::Error);
  EXPECT_EQ(r.get<std::int64_t>("big", 0), 10000000000);
  EXPECT_EQ(r.get<int>("three", 0), 3);
  EXPECT_EQ(r.get<std::uint64_t>("ok", 0), 12u);
  EXPECT_EQ(r.get<int>("neg", 0), -3);
  EXPECT_DOUBLE_EQ(r.get<double>("steps", 0.0), 2.5);  // a real-valued key is untouched
  try {
    r.get<std::uint64_t>("neg", 0);
    ADD_FAILURE() << "no error";
  } catch (const orbitlaw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("key 'neg' = -3 must be a whole number in [0, "), std::string::npos)
        << e.what();
  }
}

// A thread count of 0 is the process's share: OMP_NUM_THREADS when it is a positive count, every core
// otherwise; an explicit count wins.
TEST(Config, ThreadCountZeroFollowsOmpNumThreads) {
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string saved_value = saved ? saved : "";
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ::setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(orbitlaw::resolve_thread_count(0), 3);
  EXPECT_EQ(orbitlaw::resolve_thread_count(5), 5);
  for (const char* unusable : {"0", "-2", "two", "3x", "", "99999"}) {
    ::setenv("OMP_NUM_THREADS", unusable, 1);
    EXPECT_EQ(orbitlaw::resolve_thread_count(0), cores) << "'" << unusable << "'";
  }
  ::unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(orbitlaw::resolve_thread_count(0), cores);
  if (saved) ::setenv("OMP_NUM_THREADS", saved_value.c_str(), 1);
}
