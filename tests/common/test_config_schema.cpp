// The declarative config schema: reading with defaults, range and choice errors that name the dotted key,
// unknown keys, JSON round trips, checks of structs built in code, shared key lists, and the key reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "orbitlaw/common/config_schema.hpp"

namespace orbitlaw {
namespace {

enum class Shape { kRound, kSquare };

struct Search {
  int iterations = 10;
  double limit = 0;
};

struct Inner {
  double p = 15;
  Shape shape = Shape::kRound;
};

struct Outer {
  int layers = 2;
  std::string name = "x";
  std::vector<double> list = {1, 2};
  Inner inner;
  Search search;
  std::optional<double> exponent;
};

const ConfigSchema<Search>& search_schema() {
  static const auto s = ConfigSchema<Search>()
                            .key("iterations", &Search::iterations, "generations", Range::at_least(1))
                            .key("limit", &Search::limit, "seconds", Range::at_least(0));
  return s;
}

const ConfigSchema<Inner>& inner_schema() {
  static const auto s = ConfigSchema<Inner>()
                            .key("p", &Inner::p, "the power", Range::at_least(1))
                            .choice("shape", &Inner::shape,
                                    std::vector<std::pair<Shape, std::string>>{{Shape::kRound, "round"},
                                                                               {Shape::kSquare, "square"}},
                                    "its shape");
  return s;
}

const ConfigSchema<Outer>& outer_schema() {
  static const auto s = ConfigSchema<Outer>()
                            .key("layers", &Outer::layers, "blocks", Range::between(1, 8))
                            .key("name", &Outer::name, "a name", Range{}, {"x", "y"})
                            .key("list", &Outer::list, "numbers")
                            .section("inner", &Outer::inner, inner_schema())
                            .include(&Outer::search, search_schema())
                            .custom(
                                "exponent", &Outer::exponent,
                                [](const Json& v, const std::string& where) -> std::optional<double> {
                                  if (v.is_null()) return std::nullopt;
                                  if (!v.is_number()) throw Error(where + " must be a number or null");
                                  return v.get<double>();
                                },
                                [](const std::optional<double>& e) { return e ? Json(*e) : Json(nullptr); },
                                "number or null", "", "an optional exponent");
  return s;
}

Outer read(const Json& json) {
  ConfigReader reader(json, "test config");
  return outer_schema().read(reader, Outer{});
}

std::string error_of(const Json& json) {
  try {
    read(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigSchema, AbsentKeysTakeTheDefaultsAndGivenKeysTheirValues) {
  const Outer d = read(Json::object());
  EXPECT_EQ(d.layers, 2);
  EXPECT_EQ(d.inner.p, 15);
  EXPECT_EQ(d.search.iterations, 10);
  EXPECT_FALSE(d.exponent.has_value());
  const Outer c = read(Json::parse(
      R"({"layers": 3, "name": "y", "list": [4], "inner": {"p": 2, "shape": "square"}, "iterations": 7,
          "exponent": 2.5})"));
  EXPECT_EQ(c.layers, 3);
  EXPECT_EQ(c.name, "y");
  EXPECT_EQ(c.list, std::vector<double>{4});
  EXPECT_EQ(c.inner.p, 2);
  EXPECT_EQ(c.inner.shape, Shape::kSquare);
  EXPECT_EQ(c.search.iterations, 7);
  EXPECT_EQ(c.exponent, 2.5);
}

TEST(ConfigSchema, ErrorsNameTheDottedKeyTheUserWrote) {
  EXPECT_EQ(error_of(Json::parse(R"({"inner": {"p": -3}})")),
            "test config: inner.p must be at least 1 (got -3)");
  EXPECT_EQ(error_of(Json::parse(R"({"layers": 9})")), "test config: layers must be in [1, 8] (got 9)");
  EXPECT_EQ(error_of(Json::parse(R"({"inner": {"shape": "oval"}})")),
            "test config: inner.shape must be one of: round, square (got 'oval')");
  EXPECT_EQ(error_of(Json::parse(R"({"name": "z"})")), "test config: name must be one of: x, y (got 'z')");
  EXPECT_EQ(error_of(Json::parse(R"({"iterations": 0})")),
            "test config: iterations must be at least 1 (got 0)");
  EXPECT_EQ(error_of(Json::parse(R"({"exponent": "two"})")),
            "test config: exponent must be a number or null");
  EXPECT_NE(error_of(Json::parse(R"({"inner": {"q": 1}})")).find("unknown key 'q'"), std::string::npos);
  EXPECT_NE(error_of(Json::parse(R"({"layer": 1})")).find("unknown key 'layer'"), std::string::npos);
  EXPECT_NE(error_of(Json::parse(R"({"layers": true})")).find("wrong type"), std::string::npos);
}

TEST(ConfigSchema, ToJsonReadsBackToTheSameStruct) {
  Outer c;
  c.layers = 5;
  c.inner.shape = Shape::kSquare;
  c.search.limit = 3.5;
  c.exponent = 1.5;
  const Json json = outer_schema().to_json(c);
  EXPECT_EQ(json["inner"]["shape"], "square");
  EXPECT_EQ(json["limit"], 3.5);  // included keys sit at this level
  EXPECT_EQ(outer_schema().to_json(read(json)), json);
}

TEST(ConfigSchema, CheckRefusesAStructBuiltInCodeNamingTheKey) {
  Outer c;
  EXPECT_NO_THROW(outer_schema().check(c, "outer."));
  c.inner.p = 0.5;
  try {
    outer_schema().check(c, "outer.");
    FAIL() << "p = 0.5 passed";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "outer.inner.p must be at least 1 (got 0.5)");
  }
  c.inner.p = std::numeric_limits<double>::quiet_NaN();  // every number must be finite
  EXPECT_THROW(outer_schema().check(c, ""), Error);
}

TEST(ConfigSchema, CopyGivenTakesOnlyTheKeysASectionGives) {
  ConfigReader shared(Json::parse(R"({"iterations": 3})"), "test config");
  const Search from = search_schema().read_keys(shared, Search{});
  Search to;
  to.limit = 9;
  search_schema().copy_given(shared, from, to);
  EXPECT_EQ(to.iterations, 3);
  EXPECT_EQ(to.limit, 9);  // not given: kept
}

TEST(ConfigSchema, KeysDescribeTypeDefaultRangeAndDescription) {
  const auto keys = outer_schema().keys(Outer{}, "top.");
  std::vector<std::string> names;
  for (const auto& k : keys) names.push_back(k.key);
  EXPECT_EQ(names,
            (std::vector<std::string>{"top.layers", "top.name", "top.list", "top.inner.p", "top.inner.shape",
                                      "top.iterations", "top.limit", "top.exponent"}));
  EXPECT_EQ(keys[0].type, "integer");
  EXPECT_EQ(keys[0].default_value, "2");
  EXPECT_EQ(keys[0].allowed, "in [1, 8]");
  EXPECT_EQ(keys[1].allowed, "one of: x, y");
  EXPECT_EQ(keys[2].type, "list of numbers");
  EXPECT_EQ(keys[3].default_value, "15.0");
  EXPECT_EQ(keys[4].allowed, "one of: round, square");
  EXPECT_EQ(keys[7].default_value, "null");
  const std::string table = format_key_table(keys);
  EXPECT_NE(table.find("top.inner.p      number, default 15.0, at least 1\n"), std::string::npos) << table;
  EXPECT_NE(format_key_markdown(keys).find("| `top.layers` | integer | `2` | in [1, 8] | blocks |"),
            std::string::npos);
}

TEST(ConfigSchema, RangesOpenAndClosed) {
  EXPECT_TRUE(Range::at_least(1).contains(1));
  EXPECT_FALSE(Range::greater_than(0).contains(0));
  EXPECT_TRUE(Range::from_below(0, 1).contains(0));
  EXPECT_FALSE(Range::from_below(0, 1).contains(1));
  EXPECT_FALSE(Range::open(0, 1).contains(0));
  EXPECT_FALSE(Range{}.contains(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(Range::open(0, 1).text(), "in (0, 1)");
  EXPECT_EQ(Range::from_below(0, 1).text(), "in [0, 1)");
  EXPECT_EQ(Range::greater_than(0).text(), "greater than 0");
  EXPECT_EQ(Range{}.text(), "");
}

}  // namespace
}  // namespace orbitlaw
