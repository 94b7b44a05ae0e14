#include "checkpoint_schema.hpp"

#include <set>
#include <sstream>

namespace orbitlaw::model::detail {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error("checkpoint '" + path + "': " + what);
}

std::string shape_of(c10::IntArrayRef sizes) {
  std::ostringstream out;
  out << sizes;
  return out.str();
}

// The first difference in shape or dtype between a stored tensor and the one expected, or "".
std::string tensor_difference(const torch::Tensor& stored, const torch::Tensor& expected) {
  if (stored.sizes() != expected.sizes())
    return "has shape " + shape_of(stored.sizes()) + ", but the model config it records needs " +
           shape_of(expected.sizes());
  if (stored.scalar_type() != expected.scalar_type())
    return std::string("has dtype ") + c10::toString(stored.scalar_type()) +
           ", but the model config it records needs " + c10::toString(expected.scalar_type());
  return "";
}

bool is_count(const Json& value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value >= 0);
}

void check_train_state(const Json& state, const std::string& path) {
  if (!state.is_object()) fail(path, "its 'train_state' record is not a JSON object");
  auto key_fails = [&](const char* key, bool (*ok)(const Json&), const char* what) {
    if (state.contains(key) && !ok(state.at(key)))
      fail(path, std::string("its train_state '") + key + "' is not " + what);
  };
  key_fails("step", is_count, "a non-negative integer");
  key_fails("tokens", is_count, "a non-negative integer");
  key_fails("next_batch", is_count, "a non-negative integer");
  key_fails(
      "elapsed_s", [](const Json& v) { return v.is_number(); }, "a number");
  key_fails(
      "segments", [](const Json& v) { return v.is_array(); }, "an array");
  key_fails(
      "fingerprint",
      [](const Json& v) {
        return v.is_object() && v.value("inputs", Json::object()).is_object() &&
               v.value("settings", Json::object()).is_object();
      },
      "an object of 'inputs' and 'settings' objects");
  key_fails(
      "data",
      [](const Json& v) {
        if (!v.is_object()) return false;
        const Json cadences = v.value("cadences", Json::array());
        if (!cadences.is_array()) return false;
        for (const auto& c : cadences)
          if (!c.is_number()) return false;
        return true;
      },
      "an object whose 'cadences' are numbers");
}

}  // namespace

void check_checkpoint_records(const CheckpointContent& content, const std::string& path) {
  check_train_state(content.train_state, path);
  if (!content.provenance.is_object()) fail(path, "its 'provenance' record is not a JSON object");
  if (content.model.vocab != content.tokenizer.vocab())
    fail(path, "its model vocabulary (" + std::to_string(content.model.vocab) +
                   ") is not its tokenizer's (bins + 3 = " + std::to_string(content.tokenizer.vocab()) + ")");
}

namespace {

void check_tensors_under(const torch::nn::Module& module, torch::serialize::InputArchive& archive,
                         const std::string& prefix, const std::string& path) {
  std::set<std::string> expected;
  auto check = [&](const std::string& key, const torch::Tensor& want) {
    expected.insert(key);
    torch::Tensor stored;
    if (!archive.try_read(key, stored)) fail(path, "its model record has no tensor '" + prefix + key + "'");
    if (const auto difference = tensor_difference(stored, want); !difference.empty())
      fail(path, "model tensor '" + prefix + key + "' " + difference);
  };
  for (const auto& parameter : module.named_parameters(/*recurse=*/false))
    check(parameter.key(), parameter.value());
  for (const auto& buffer : module.named_buffers(/*recurse=*/false)) check(buffer.key(), buffer.value());
  for (const auto& child : module.named_children()) {
    if (!child.value()->is_serializable()) continue;  // Module::load skips these too
    expected.insert(child.key());
    torch::serialize::InputArchive sub;
    if (!archive.try_read(child.key(), sub))
      fail(path, "its model record has no module '" + prefix + child.key() + "'");
    check_tensors_under(*child.value(), sub, prefix + child.key() + ".", path);
  }
  // Module::load ignores what it does not ask for: weights of a larger model would be dropped silently.
  for (const auto& key : archive.keys()) {
    if (!expected.count(key))
      fail(path, "its model record holds '" + prefix + key + "', which the model config it records has not");
  }
}

}  // namespace

void check_module_tensors(const torch::nn::Module& module, torch::serialize::InputArchive& archive,
                          const std::string& path) {
  check_tensors_under(module, archive, "", path);
}

void check_optimizer_state(const torch::optim::Optimizer& optimizer, const std::string& path) {
  int index = 0;
  for (const auto& group : optimizer.param_groups()) {
    for (const auto& parameter : group.params()) {
      const auto found = optimizer.state().find(parameter.unsafeGetTensorImpl());
      const auto* state = found == optimizer.state().end()
                              ? nullptr
                              : dynamic_cast<const torch::optim::AdamWParamState*>(found->second.get());
      if (state) {
        for (const auto& [name, moment] :
             {std::pair{"exp_avg", state->exp_avg()}, std::pair{"exp_avg_sq", state->exp_avg_sq()},
              std::pair{"max_exp_avg_sq", state->max_exp_avg_sq()}}) {
          if (!moment.defined()) continue;
          if (const auto difference = tensor_difference(moment, parameter); !difference.empty())
            fail(path, "optimizer state '" + std::string(name) + "' of parameter " + std::to_string(index) +
                           " " + difference);
        }
      }
      ++index;
    }
  }
}

}  // namespace orbitlaw::model::detail
