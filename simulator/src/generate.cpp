// Dataset generation: systems are simulated on worker threads and written strictly in index order by the
// calling thread, so the file is the same whatever the thread count.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "dataset_writer.hpp"
#include "orbitlaw/common/atomic_file.hpp"
#include "orbitlaw/common/build_info.hpp"
#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/progress.hpp"
#include "orbitlaw/simulator.hpp"

namespace orbitlaw::simulator {

std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used_i = 0, used_n = 0;
    const int i = std::stoi(text.substr(0, slash), &used_i);
    const int n = std::stoi(text.substr(slash + 1), &used_n);
    if (used_i != slash || used_n != text.size() - slash - 1 || n < 1 || i < 0 || i >= n) {
      throw std::invalid_argument("range");
    }
    return {i, n};
  } catch (const std::exception&) {
    throw Error("--shard must be i/n with 0 <= i < n (e.g. 0/4), got '" + text + "'");
  }
}

namespace {

// Results computed ahead of the writer wait in a ring of slots; workers never run more than `window` systems
// ahead of the last one written, which bounds memory.
class OrderedResults {
 public:
  explicit OrderedResults(std::int64_t window) : slots_(static_cast<std::size_t>(window)) {}

  std::int64_t window() const { return static_cast<std::int64_t>(slots_.size()); }

  // Worker: waits until `position` fits in the window (or the run is cancelled).
  bool wait_for_room(std::int64_t position) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return cancelled_ || position < written_ + window(); });
    return !cancelled_;
  }
  void put(std::int64_t position, SimulatedSystem result) {
    {
      std::lock_guard lock(mutex_);
      slots_[static_cast<std::size_t>(position % window())] = std::move(result);
    }
    changed_.notify_all();
  }
  // Writer: waits for the next result in order. Empty on cancellation.
  std::optional<SimulatedSystem> take(std::int64_t position) {
    std::unique_lock lock(mutex_);
    auto& slot = slots_[static_cast<std::size_t>(position % window())];
    changed_.wait(lock, [&] { return cancelled_ || slot.has_value(); });
    if (cancelled_) return std::nullopt;
    std::optional<SimulatedSystem> result = std::move(slot);
    slot.reset();
    return result;
  }
  void mark_written(std::int64_t count) {
    {
      std::lock_guard lock(mutex_);
      written_ = count;
    }
    changed_.notify_all();
  }
  void cancel(std::exception_ptr error) {
    {
      std::lock_guard lock(mutex_);
      if (!error_ && error) error_ = error;
      cancelled_ = true;
    }
    changed_.notify_all();
  }
  std::exception_ptr error() {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::optional<SimulatedSystem>> slots_;
  std::int64_t written_ = 0;
  bool cancelled_ = false;
  std::exception_ptr error_;
};

Json root_attributes(const SimulationConfig& config, const WriteOptions& options,
                     const DatasetSummary& summary, const Json& resolved_config) {
  Json a = Json::object();
  a["format"] = kDatasetFormat;
  a["schema_version"] = static_cast<std::int64_t>(kDatasetSchemaVersion);
  a["units"] = "length AU, time yr, mass Msun";
  a["G"] = kGravitationalConstant;
  a["force_law_exponent"] = config.force_exponent;  // F = G m1 m2 / r^k; readers take 2 when it is missing
  a["dim"] = static_cast<std::int64_t>(config.dim);
  a["config"] = resolved_config.dump();
  a["preset"] = config.preset;
  a["seed"] = static_cast<std::uint64_t>(config.seed);
  a["integrator"] = integrator_name(config.integrator.kind);
  a["abs_tol"] = config.integrator.abs_tol;
  a["rel_tol"] = config.integrator.rel_tol;
  a["sequence_rows"] = static_cast<std::int64_t>(config.sequence_rows);
  a["orbitlaw_version"] = build_version();
  a["git_revision"] = build_git_revision();
  a["provenance"] = options.provenance.is_null() ? Json::object().dump() : options.provenance.dump();
  a["n_systems"] = summary.systems;
  a["n_systems_total"] = config.systems;
  a["first_system"] = summary.first_system;
  a["shard_index"] = static_cast<std::int64_t>(options.shard_index);
  a["shard_count"] = static_cast<std::int64_t>(options.shard_count);
  std::int64_t total = 0;
  for (int r = 0; r < static_cast<int>(Rejection::kCount); ++r) {
    a[std::string("rejected_") + rejection_name(static_cast<Rejection>(r))] = summary.rejections[r];
    total += summary.rejections[r];
  }
  a["rejected_total"] = total;
  return a;
}

}  // namespace

DatasetSummary write_dataset(const SimulationConfig& config, const std::string& path,
                             const WriteOptions& options) {
  require_thread_count("simulate: threads", options.threads, 1);
  if (options.shard_count < 1 || options.shard_index < 0 || options.shard_index >= options.shard_count) {
    throw Error("shard must be i/n with 0 <= i < n");
  }
  const auto start_time = std::chrono::steady_clock::now();
  DatasetSummary summary;
  const std::int64_t first = config.systems * options.shard_index / options.shard_count;
  const std::int64_t last = config.systems * (options.shard_index + 1) / options.shard_count;
  summary.first_system = first;
  const std::int64_t count = last - first;
  if (count < 1)
    throw Error("shard " + std::to_string(options.shard_index) + " of " +
                std::to_string(options.shard_count) + " would hold no systems");

  Json resolved = options.resolved_config;
  if (resolved.is_null() || resolved.empty()) {
    resolved = Json{{"preset", config.preset},
                    {"systems", config.systems},
                    {"seed", config.seed},
                    {"dim", config.dim},
                    {"integrator", integrator_name(config.integrator.kind)},
                    {"force_law", {{"exponent", config.force_exponent}}}};
  }

  AtomicOutput output(path);
  {
    DatasetFileWriter writer(output.temp_path(), config.dim);
    OrderedResults results(std::max<std::int64_t>(64, 16 * options.threads));
    std::atomic<std::int64_t> next{0};
    auto work = [&] {
      try {
        for (;;) {
          const std::int64_t position = next.fetch_add(1);
          if (position >= count) return;
          if (!results.wait_for_room(position)) return;
          results.put(position, simulate_system(config, first + position));
        }
      } catch (...) {
        results.cancel(std::current_exception());
      }
    };
    std::vector<std::thread> workers;
    for (int t = 0; t < options.threads; ++t) workers.emplace_back(work);
    std::optional<Progress> progress;
    if (options.show_progress) progress.emplace("simulate", count, "systems");
    try {
      for (std::int64_t position = 0; position < count; ++position) {
        auto result = results.take(position);
        if (!result) break;
        writer.append(result->system, result->index, result->attempts);
        for (int r = 0; r < static_cast<int>(Rejection::kCount); ++r)
          summary.rejections[r] += result->rejections[r];
        results.mark_written(position + 1);
        if (progress) progress->set(position + 1);
      }
    } catch (...) {
      results.cancel(std::current_exception());
    }
    for (auto& worker : workers) worker.join();
    if (auto error = results.error()) std::rethrow_exception(error);
    if (progress) progress->finish();
    summary.systems = writer.systems();
    writer.finish(root_attributes(config, options, summary, resolved));
  }
  output.commit();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return summary;
}

}  // namespace orbitlaw::simulator
