#pragma once
// One probe run as `orbitlaw probe` performs it: build the force dataset, run the probes (fine-tune, linear,
// KNN, Newton), write predictions.h5, run the law searches on the predictions (sr.json), and record
// provenance. Config keys (all optional), with their defaults in run_config.cpp:
//   seed, threads (0: OMP_NUM_THREADS, else every core), device ("auto": CUDA when available; "cpu",
//   "cuda", "cuda:N"), time_limit_seconds (a wall budget for the whole run, 0 = none: the model probes get
//   its first half, each law search an equal share of the rest), label, task ("magnitude": the two-body
//   force-magnitude task and its law searches; "vector": the force-vector task of force_vectors.hpp, probes
//   finetune, knn, newton, no law search), target ("force": G m1 m2 / r^2, Vafa et al.'s; "acceleration": the
//   planet's G m2 / r^2, magnitude task), probes [finetune, linear, knn, knn_log, newton, random] (without a
//   checkpoint: knn, knn_log, newton, random), vector {label_fraction, validation_fraction,
//   test_rows_per_system}, split {systems, test_fraction, validation_fraction, test_rows_per_system,
//   train_rows_per_system, observed_rows (oracle-only runs; a checkpoint's tokenizer decides otherwise)},
//   finetune {steps, batch_size, lr, head_lr, weight_decay, grad_clip, eval_interval, target,
//             time_limit_seconds},
//   linear {lambdas, target, batch_size}, knn {k, state}, random {features},
//   observable_bin_width (AU; default one bin of the checkpoint's tokenizer, 0 without one),
//   allow_distribution_shift (false: probe data with a cadence the model never saw in training, or with
//   more than max_outside_range_fraction (0.01) of its coordinates outside its tokenizer's range, is
//   refused), sr {probes (default: every probe run), protocols [published, extended], galaxies, galaxy_rows,
//       nearest_rows, observable_only (true), confidence (0.95), published {...}, extended {...}}; see
//       law_search.hpp for a protocol's keys.
#include <string>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw::probe {

struct ProbeRunPaths {
  std::string checkpoint;  // empty: oracles only
  std::string data;        // two-body trajectory dataset
  std::string out;         // folder; created if missing
  bool oracle_only = false;
  // Reuse what an interrupted run into `out` finished (probe_progress.hpp): its model probes and its finished
  // law searches, when config, checkpoint and data are the same. The magnitude task only.
  bool resume = false;
};

struct ProbeRunSummary {
  Json summary;  // what probe.json holds
  std::string predictions_path, sr_path, summary_path, provenance_path;
};

// The probe run's config as it would run (every key, defaults included; `use_model`: a checkpoint is given
// and
// --oracle-only is not): what --show-config prints. Throws Error for unknown keys and bad values.
Json resolve_probe_config(const Json& config, bool use_model);

// Reads `config` (rejecting unknown keys), runs everything, and writes into paths.out. Throws Error with one
// line for bad input; outputs are written atomically, so an interrupted run leaves no complete-looking file.
ProbeRunSummary run_probe(const Json& config, const ProbeRunPaths& paths, const Json& library_versions,
                          bool show_progress = true);

}  // namespace orbitlaw::probe
