#include "orbitlaw/model/checkpoint.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>
#include <mutex>

#include "checkpoint_schema.hpp"
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/checked_file.hpp"

namespace orbitlaw::model {

namespace {

std::string read_string(torch::serialize::InputArchive& archive, const std::string& key,
                        const std::string& path) {
  c10::IValue value;
  if (!archive.try_read(key, value) || !value.isString())
    throw Error("checkpoint '" + path + "' is not an orbitlaw checkpoint (no '" + key + "' record)");
  return value.toStringRef();
}

Json parse_record(const std::string& text, const std::string& key, const std::string& path) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error&) {
    throw Error("checkpoint '" + path + "' is corrupt: its '" + key + "' record is not valid JSON");
  }
}

// Opens the archive and reads the header records; every failure becomes one line naming the file.
CheckpointContent open_checkpoint(const std::string& path, torch::serialize::InputArchive& archive) {
  if (!std::filesystem::exists(path)) throw Error("checkpoint '" + path + "' does not exist");
  try {
    archive.load_from(path);
  } catch (const c10::Error&) {
    throw Error("checkpoint '" + path + "' is corrupt or not a LibTorch archive");
  }
  const std::string format = read_string(archive, "format", path);
  if (format != kCheckpointFormat)
    throw Error("checkpoint '" + path + "' has format '" + format + "', expected '" + kCheckpointFormat +
                "'");
  c10::IValue version;
  if (!archive.try_read("version", version) || !version.isInt() || version.toInt() != kCheckpointVersion)
    throw Error("checkpoint '" + path + "' has an unsupported version (this build reads version " +
                std::to_string(kCheckpointVersion) + ")");
  CheckpointContent content;
  // Read outside the try: a missing or unparsable record has its own message, not "an invalid config".
  const Json model = parse_record(read_string(archive, "model_config", path), "model", path);
  const Json tokenizer = parse_record(read_string(archive, "tokenizer_config", path), "tokenizer", path);
  try {
    content.model = ModelConfig::from_json(model);
    content.tokenizer = TokenizerConfig::from_json(tokenizer);
  } catch (const Error& e) {
    throw Error("checkpoint '" + path + "' holds an invalid config: " + e.what());
  }
  content.train_state = parse_record(read_string(archive, "train_state", path), "train_state", path);
  content.provenance = parse_record(read_string(archive, "provenance", path), "provenance", path);
  detail::check_checkpoint_records(content, path);
  return content;
}

// The first key whose value differs between two flat JSON objects, or "" when they agree. allow_fused is a
// run-time choice, not part of the architecture.
std::string first_difference(const Json& a, const Json& b) {
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (it.key() == "allow_fused") continue;
    if (!b.contains(it.key()) || b.at(it.key()) != it.value()) {
      return it.key() + " = " + it.value().dump() + " in the checkpoint, " +
             (b.contains(it.key()) ? b.at(it.key()).dump() : std::string("absent")) + " in the config";
    }
  }
  return "";
}

// Restores one module-like record (the model or the optimizer); `check` sees the stored record first.
void load_module(torch::serialize::InputArchive& archive, const std::string& key, const std::string& path,
                 const std::function<void(torch::serialize::InputArchive&)>& load,
                 const std::function<void(torch::serialize::InputArchive&)>& check = nullptr) {
  torch::serialize::InputArchive sub;
  if (!archive.try_read(key, sub)) throw Error("checkpoint '" + path + "' has no '" + key + "' record");
  if (check) check(sub);
  try {
    load(sub);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    throw Error("checkpoint '" + path + "': cannot restore its " + key + ": " + what);
  }
}

// Restores torch's CPU generator; a stored state of another size is refused by LibTorch with a backtrace.
void restore_rng_state(torch::serialize::InputArchive& archive, const std::string& path) {
  torch::Tensor rng;
  if (!archive.try_read("rng_state", rng)) return;
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  try {
    generator.set_state(rng);
  } catch (const c10::Error&) {
    throw Error("checkpoint '" + path + "': its 'rng_state' record is not a CPU generator state");
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointContent& content, Gpt& model,
                     torch::optim::Optimizer* optimizer) {
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(std::string(kCheckpointFormat)));
  archive.write("version", c10::IValue(static_cast<std::int64_t>(kCheckpointVersion)));
  archive.write("model_config", c10::IValue(content.model.to_json().dump()));
  archive.write("tokenizer_config", c10::IValue(content.tokenizer.to_json().dump()));
  archive.write("train_state", c10::IValue(content.train_state.dump()));
  archive.write("provenance", c10::IValue(content.provenance.dump()));
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("rng_state", generator.get_state());
  }
  torch::serialize::OutputArchive model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  AtomicOutput out(path);
  // LibTorch's own file writer throws a failed write (a full disk) from a destructor: std::terminate. Here
  // each chunk goes through a checked write; LibTorch is told every chunk was taken, and the first failure
  // is thrown once it returns.
  CheckedFile file(out.temp_path(), CheckedFile::Mode::kTruncate, path);
  std::exception_ptr failure;
  archive.save_to([&](const void* data, std::size_t size) -> std::size_t {
    if (failure) return size;
    try {
      file.write(data, size);
    } catch (const Error&) {
      failure = std::current_exception();
    }
    return size;
  });
  if (failure) std::rethrow_exception(failure);
  file.close();
  out.commit();
}

CheckpointContent read_checkpoint_header(const std::string& path) {
  torch::serialize::InputArchive archive;
  return open_checkpoint(path, archive);
}

CheckpointContent load_checkpoint(const std::string& path, const CheckpointContent& expected, Gpt& model,
                                  torch::optim::Optimizer* optimizer, bool restore_rng) {
  torch::serialize::InputArchive archive;
  CheckpointContent content = open_checkpoint(path, archive);
  if (auto diff = first_difference(content.model.to_json(), expected.model.to_json()); !diff.empty())
    throw Error("checkpoint '" + path + "' does not match the model config: " + diff);
  if (auto diff = first_difference(content.tokenizer.to_json(), expected.tokenizer.to_json()); !diff.empty())
    throw Error("checkpoint '" + path + "' does not match the tokenizer config: tokenizer." + diff);
  load_module(
      archive, "model", path, [&](torch::serialize::InputArchive& a) { model->load(a); },
      [&](torch::serialize::InputArchive& a) { detail::check_module_tensors(*model, a, path); });
  if (optimizer) {
    load_module(archive, "optimizer", path, [&](torch::serialize::InputArchive& a) { optimizer->load(a); });
    detail::check_optimizer_state(*optimizer, path);
  }
  if (restore_rng) restore_rng_state(archive, path);
  return content;
}

LoadedModel load_model(const std::string& path, torch::Device device) {
  CheckpointContent header = read_checkpoint_header(path);
  LoadedModel loaded;
  loaded.config = header.model;
  loaded.tokenizer = header.tokenizer;
  loaded.module = Gpt(header.model);
  load_checkpoint(path, header, loaded.module, nullptr, false);
  loaded.module->to(device);
  loaded.module->eval();
  loaded.train_state = header.train_state;
  loaded.provenance = header.provenance;
  return loaded;
}

}  // namespace orbitlaw::model
