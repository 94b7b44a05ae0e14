#pragma once
// The probe run's config (the keys of orbitlaw/probe/run.hpp), read once with every default stated in
// run_config.cpp, before any data or model is touched. Includes LibTorch (through model_probes.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/force_vectors.hpp"
#include "orbitlaw/probe/label_control.hpp"
#include "orbitlaw/probe/law_search.hpp"
#include "orbitlaw/probe/model_probes.hpp"
#include "orbitlaw/probe/oracles.hpp"
#include "orbitlaw/probe/random_features.hpp"
#include "orbitlaw/probe/raw_input_probe.hpp"

namespace orbitlaw::probe::detail {

// Probe names in the order predictions.h5 lists them. linear_vector: ridge probes of the target's vector,
// whose length is the magnitude prediction (asked for by name only). knn: Vafa et al.'s oracle on the
// standardised true state; knn_log: the same on (ln r, ln m1, ln m2), the law's own inputs (a labelled
// variant, never the default oracle); random: ridge on random features, the negative control; raw_input and
// raw_input_vector: the linear and linear_vector probes' ridges on the model's input window instead of its
// hidden states (raw_input_probe.hpp), the control that says what needs no network (asked for by name only);
// kepler: linear probes of the orbital elements with their raw-input control (kepler_probe.hpp; by name only,
// no force predictions: it is reported in probe.json alone).
inline constexpr const char* kKeplerProbe = "kepler";
const std::vector<std::string>& known_probes();

struct ProbeRunConfig {
  std::uint64_t seed = 0;
  int threads = 0;              // 0: OMP_NUM_THREADS or every core (resolve_thread_count); resolved when read
  std::string device = "auto";  // "auto" (CUDA when available), "cpu", "cuda" or "cuda:N"
  // A wall-time budget for the whole run (0: none); run.cpp says how it is shared between the stages.
  double time_limit_seconds = 0;
  std::string label;         // empty: the model's attention kind, or "oracle"
  bool vector_task = false;  // task "vector" (force vectors) rather than "magnitude"
  std::vector<std::string> probes;
  ProbeTarget target = ProbeTarget::kForce;
  ForceSplitConfig split;
  ForceVectorConfig vector_split;
  FineTuneOptions finetune;
  LinearProbeOptions linear;
  KnnOptions knn, knn_log;  // knn_log: knn on log_knn_state()
  RandomFeatureOptions random_features;
  RawInputOptions raw_input;
  LabelControl labels;  // a control task in place of the data's own labels (label_control.hpp)
  // Rows whose visible track bends by less than this (AU) do not show the force: galaxies leave them out.
  // -1: one bin of the checkpoint's tokenizer (0, every row observable, for oracle-only runs).
  double observable_bin_width = -1;
  // Probe data outside the checkpoint's training distribution (unseen cadence, more than
  // max_outside_fraction of coordinates clamped) is refused unless this is set.
  bool allow_distribution_shift = false;
  double max_outside_fraction = 0.01;
  std::vector<std::string> sr_probes;          // the probes whose predictions get law searches
  std::vector<LawSearchOptions> law_searches;  // one per protocol, in the configured order
  Json resolved;                               // every key with the value used, as recorded with the outputs

  // Reads `config`, rejecting unknown keys and out-of-range values with one-line Errors. `use_model`: a
  // checkpoint is given (the default probes and which probes are allowed depend on it).
  static ProbeRunConfig from_config(const Json& config, bool use_model);
  // The keys whose defaults do not depend on the run (probes and sr are read beside them).
  static const ConfigSchema<ProbeRunConfig>& schema();
  // Every key of the probe config, for `orbitlaw config keys probe`.
  static std::vector<KeyDoc> keys();
};

}  // namespace orbitlaw::probe::detail
