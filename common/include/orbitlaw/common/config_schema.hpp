#pragma once
// One declarative schema per config section: each key with its type, default, allowed values and a one-line
// description, bound to a member of the section's struct. Reading (with one-line errors that name the key as
// the user writes it), writing the resolved settings, checking a struct built in code, and the key reference
// (`orbitlaw config keys`, docs/config.md) all come from the one list, so they cannot drift apart.
//
//   const ConfigSchema<TrainConfig>& schema() {
//     static const auto s = ConfigSchema<TrainConfig>()
//         .key("lr", &TrainConfig::lr, "peak learning rate", Range::greater_than(0));
//     return s;
//   }
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/error.hpp"

namespace orbitlaw {

// The values a number may take: an interval, either end closed, open or absent. Every number must also be
// finite.
struct Range {
  std::optional<double> min, max;
  bool min_open = false, max_open = false;

  static Range at_least(double v) { return {v, std::nullopt, false, false}; }
  static Range greater_than(double v) { return {v, std::nullopt, true, false}; }
  static Range between(double lo, double hi) { return {lo, hi, false, false}; }    // [lo, hi]
  static Range from_below(double lo, double hi) { return {lo, hi, false, true}; }  // [lo, hi)
  static Range open(double lo, double hi) { return {lo, hi, true, true}; }         // (lo, hi)

  bool contains(double v) const;
  // "at least 1", "greater than 0", "in [0, 1)", "any" (no bound).
  std::string text() const;
};

// One line of the key reference.
struct KeyDoc {
  std::string key;            // dotted, as --set takes it: "model.p"
  std::string type;           // "integer", "number", "boolean", "string", "list of numbers", "object", ...
  std::string default_value;  // JSON text
  std::string allowed;        // "at least 1", "one of: a, b", "" when anything of the type goes
  std::string description;
};

// Plain-text table of keys (what `orbitlaw config keys` prints) and its Markdown form (docs/config.md).
std::string format_key_table(const std::vector<KeyDoc>& keys);
std::string format_key_markdown(const std::vector<KeyDoc>& keys);

namespace schema_detail {
template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, bool>)
    return "boolean";
  else if constexpr (std::is_integral_v<T>)
    return "integer";
  else if constexpr (std::is_floating_point_v<T>)
    return "number";
  else if constexpr (std::is_same_v<T, std::string>)
    return "string";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>)
    return "list of strings";
  else if constexpr (std::is_same_v<T, std::vector<double>>)
    return "list of numbers";
  else if constexpr (std::is_same_v<T, std::vector<int>>)
    return "list of integers";
  else
    return "JSON value";
}
std::string join_choices(const std::vector<std::string>& choices);
std::string number_text(double value);  // as a person writes it: -3, 0.5, 1e-08
[[noreturn]] void fail_value(const std::string& where, const std::string& value, const std::string& allowed);
}  // namespace schema_detail

template <class C>
class ConfigSchema {
 public:
  // A key whose value is the member `access(c)` (a data-member pointer, or a lambda returning a reference
  // for a nested member). Numbers are checked against `range`, strings against `choices` when given.
  template <class Access>
  ConfigSchema&& key(std::string name, Access access, std::string description, Range range = {},
                     std::vector<std::string> choices = {}) && {
    using T = std::remove_cvref_t<decltype(get(access, std::declval<C&>()))>;
    Field f;
    f.name = name;
    f.read = [=](ConfigReader& reader, C& out, const C& defaults) {
      T value = reader.get<T>(name, get(access, defaults));
      check_value<T>(reader.name_of(name), value, range, choices);
      get(access, out) = std::move(value);
    };
    f.write = [=](const C& c, Json& json) { json[name] = get(access, c); };
    f.copy = [=](const C& from, C& to) { get(access, to) = get(access, from); };
    f.check = [=](const C& c, const std::string& where) {
      check_value<T>(where + name, get(access, c), range, choices);
    };
    f.doc = [=](const C& defaults, const std::string& prefix, std::vector<KeyDoc>& docs) {
      std::string allowed = choices.empty() ? "" : "one of: " + schema_detail::join_choices(choices);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) allowed = range.text();
      docs.push_back({prefix + name, schema_detail::type_name<T>(), Json(get(access, defaults)).dump(),
                      allowed, description});
    };
    fields_.push_back(std::move(f));
    return std::move(*this);
  }

  // A key written as one of a list of names and held as another type V (an enum, a registry handle):
  // `parse` turns a name into V (and throws Error on an unknown one), `format` a V into its name.
  template <class Access, class Parse, class Format>
  ConfigSchema&& named(std::string name, Access access, Parse parse, Format format,
                       std::function<std::vector<std::string>()> choices, std::string description) && {
    Field f;
    f.name = name;
    f.read = [=](ConfigReader& reader, C& out, const C& defaults) {
      const std::string text = reader.get<std::string>(name, format(get(access, defaults)));
      const auto allowed = choices();
      bool known = false;
      for (const auto& c : allowed) known = known || c == text;
      if (!known)
        schema_detail::fail_value(reader.name_of(name), "'" + text + "'",
                                  "one of: " + schema_detail::join_choices(allowed));
      get(access, out) = parse(text);
    };
    f.write = [=](const C& c, Json& json) { json[name] = format(get(access, c)); };
    f.copy = [=](const C& from, C& to) { get(access, to) = get(access, from); };
    f.check = [](const C&, const std::string&) {};  // a V always has a name
    f.doc = [=](const C& defaults, const std::string& prefix, std::vector<KeyDoc>& docs) {
      docs.push_back({prefix + name, "string", Json(format(get(access, defaults))).dump(),
                      "one of: " + schema_detail::join_choices(choices()), description});
    };
    fields_.push_back(std::move(f));
    return std::move(*this);
  }

  // An enum written as one of its names.
  template <class Access, class E>
  ConfigSchema&& choice(std::string name, Access access, std::vector<std::pair<E, std::string>> names,
                        std::string description) && {
    auto parse = [names, name](const std::string& text) {
      for (const auto& [value, n] : names)
        if (n == text) return value;
      throw Error("unknown value '" + text + "' for " + name);
    };
    auto format = [names](E value) {
      for (const auto& [v, n] : names)
        if (v == value) return n;
      return std::string("?");
    };
    auto choices = [names] {
      std::vector<std::string> out;
      for (const auto& entry : names) out.push_back(entry.second);
      return out;
    };
    return std::move(*this).named(std::move(name), access, parse, format, choices, std::move(description));
  }

  // A nested section ("model": {...}) read with its own schema.
  template <class Access, class S>
  ConfigSchema&& section(std::string name, Access access, const ConfigSchema<S>& schema) && {
    Field f;
    f.name = name;
    f.read = [=](ConfigReader& reader, C& out, const C& defaults) {
      ConfigReader sub = reader.section(name);
      get(access, out) = schema.read(sub, get(access, defaults));
      reader.set_resolved(name, schema.to_json(get(access, out)));
    };
    f.write = [=](const C& c, Json& json) { json[name] = schema.to_json(get(access, c)); };
    f.copy = [=](const C& from, C& to) { get(access, to) = get(access, from); };
    f.check = [=](const C& c, const std::string& where) { schema.check(get(access, c), where + name + "."); };
    f.doc = [=](const C& defaults, const std::string& prefix, std::vector<KeyDoc>& docs) {
      for (auto& d : schema.keys(get(access, defaults), prefix + name + ".")) docs.push_back(std::move(d));
    };
    fields_.push_back(std::move(f));
    return std::move(*this);
  }

  // A key whose JSON value needs its own reading (a list also written as "a,b,c"; a number or null):
  // `parse(json, where)` returns the member's value or throws Error naming `where`, `format` gives the JSON.
  template <class Access, class Parse, class Format>
  ConfigSchema&& custom(std::string name, Access access, Parse parse, Format format, std::string type,
                        std::string allowed, std::string description) && {
    Field f;
    f.name = name;
    f.read = [=](ConfigReader& reader, C& out, const C& defaults) {
      get(access, out) = parse(reader.get<Json>(name, format(get(access, defaults))), reader.name_of(name));
    };
    f.write = [=](const C& c, Json& json) { json[name] = format(get(access, c)); };
    f.copy = [=](const C& from, C& to) { get(access, to) = get(access, from); };
    f.check = [=](const C& c, const std::string& where) { parse(format(get(access, c)), where + name); };
    f.doc = [=](const C& defaults, const std::string& prefix, std::vector<KeyDoc>& docs) {
      docs.push_back({prefix + name, type, format(get(access, defaults)).dump(), allowed, description});
    };
    fields_.push_back(std::move(f));
    return std::move(*this);
  }

  // Every key of `schema` at this level, bound to the member `access(c)`: one list of keys shared by the
  // sections that hold it (the search options in `orbitlaw sr`, the probe's sr section and each protocol).
  template <class Access, class S>
  ConfigSchema&& include(Access access, const ConfigSchema<S>& schema) && {
    for (const auto& inner : schema.fields_) {
      Field f;
      f.name = inner.name;
      f.read = [=](ConfigReader& reader, C& out, const C& defaults) {
        inner.read(reader, get(access, out), get(access, defaults));
      };
      f.write = [=](const C& c, Json& json) { inner.write(get(access, c), json); };
      f.copy = [=](const C& from, C& to) { inner.copy(get(access, from), get(access, to)); };
      f.check = [=](const C& c, const std::string& where) { inner.check(get(access, c), where); };
      f.doc = [=](const C& defaults, const std::string& prefix, std::vector<KeyDoc>& docs) {
        inner.doc(get(access, defaults), prefix, docs);
      };
      fields_.push_back(std::move(f));
    }
    return std::move(*this);
  }

  // Reads every key of this section from `reader` (defaults from `defaults`), refuses unknown keys, and
  // returns the struct. Errors name the key: "train config: model.p must be at least 1 (got -3)".
  C read(ConfigReader& reader, const C& defaults) const {
    C out = read_keys(reader, defaults);
    reader.finish();
    return out;
  }
  // The same without refusing other keys: for a section that also holds keys its caller reads.
  C read_keys(ConfigReader& reader, const C& defaults) const {
    C out = defaults;
    for (const auto& f : fields_) f.read(reader, out, defaults);
    return out;
  }
  // Copies into `to` the members of the keys that `reader`'s section gives: a shared section's settings
  // applied on top of another section's defaults.
  void copy_given(const ConfigReader& reader, const C& from, C& to) const {
    for (const auto& f : fields_)
      if (reader.has(f.name)) f.copy(from, to);
  }
  Json to_json(const C& c) const {
    Json json = Json::object();
    for (const auto& f : fields_) f.write(c, json);
    return json;
  }
  // Throws Error, naming `where` + key, for a value outside its range or choices (a struct built in code).
  void check(const C& c, const std::string& where = "") const {
    for (const auto& f : fields_) f.check(c, where);
  }
  std::vector<KeyDoc> keys(const C& defaults, const std::string& prefix = "") const {
    std::vector<KeyDoc> docs;
    for (const auto& f : fields_) f.doc(defaults, prefix, docs);
    return docs;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) out.push_back(f.name);
    return out;
  }

 private:
  struct Field {
    std::string name;
    std::function<void(ConfigReader&, C&, const C&)> read;
    std::function<void(const C&, Json&)> write;
    std::function<void(const C&, C&)> copy;
    std::function<void(const C&, const std::string&)> check;
    std::function<void(const C&, const std::string&, std::vector<KeyDoc>&)> doc;
  };

  template <class Access, class Object>
  static decltype(auto) get(const Access& access, Object& c) {
    if constexpr (std::is_member_object_pointer_v<Access>) {
      return (c.*access);
    } else {
      return access(c);
    }
  }

  template <class T>
  static void check_value(const std::string& where, const T& value, const Range& range,
                          const std::vector<std::string>& choices) {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (!range.contains(static_cast<double>(value)))
        schema_detail::fail_value(where, schema_detail::number_text(static_cast<double>(value)),
                                  range.text());
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (choices.empty()) return;
      for (const auto& c : choices)
        if (c == value) return;
      schema_detail::fail_value(where, "'" + value + "'", "one of: " + schema_detail::join_choices(choices));
    }
  }

  template <class Other>
  friend class ConfigSchema;  // include() reads another schema's fields
  std::vector<Field> fields_;
};

}  // namespace orbitlaw
