#pragma once
// The force-vector half of `orbitlaw probe` (config "task": "vector"), called by run_probe once the config is
// read and the model (if any) loaded. Includes LibTorch: no fmt or spdlog here.
#include <functional>
#include <string>
#include <vector>

#include "orbitlaw/probe/force_vectors.hpp"
#include "orbitlaw/probe/model_probes.hpp"
#include "orbitlaw/probe/run_outputs.hpp"

namespace orbitlaw::probe::detail {

struct VectorTask {
  ForceVectorConfig split;
  FineTuneOptions finetune;
  int knn_k = 2;
  std::vector<std::string> probes;  // among finetune, knn, newton
  std::string label;
  std::uint64_t seed = 0;
  Json resolved_config;
  Json library_versions;
  const model::LoadedModel* model = nullptr;  // null: oracles only
  std::function<void(const std::string&)> log;
};

ProbeRunSummary run_vector_task(const VectorTask& task, const ProbeRunPaths& paths);

// Shared by both tasks (defined in run.cpp). The provenance record embedded in a predictions file.
Json predictions_provenance(const Json& resolved, std::uint64_t seed, const Json& library_versions,
                            const ProbeRunPaths& paths);
// Writes out.summary as probe.json and the run's provenance record into paths.out; sets their paths in `out`.
void write_summary_and_provenance(ProbeRunSummary& out, const ProbeRunPaths& paths, const Json& resolved,
                                  std::uint64_t seed, const Json& library_versions);

}  // namespace orbitlaw::probe::detail
