#pragma once
// One probe run as `orbitlaw probe` performs it: build the force dataset, run the probes (fine-tune, linear,
// KNN, Newton, the controls), write predictions.h5, run the law searches on the predictions (sr.json), and
// record provenance. Its config keys, with types, defaults and descriptions, are the schema in
// probe/src/run_config.cpp: `orbitlaw config keys probe`, docs/config.md.
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/config_schema.hpp"
#include "orbitlaw/probe/run_outputs.hpp"

namespace orbitlaw::probe {

// The probe run's config as it would run (every key, defaults included; `use_model`: a checkpoint is given
// and --oracle-only is not): what --show-config prints. Throws Error for unknown keys and bad values.
Json resolve_probe_config(const Json& config, bool use_model);
// Every key of the probe config with its type, default, range and description (orbitlaw config keys probe).
std::vector<KeyDoc> probe_config_keys();

// Reads `config` (rejecting unknown keys), runs everything, and writes into paths.out. Throws Error with one
// line for bad input; outputs are written atomically, so an interrupted run leaves no complete-looking file.
ProbeRunSummary run_probe(const Json& config, const ProbeRunPaths& paths, const Json& library_versions,
                          bool show_progress = true);

}  // namespace orbitlaw::probe
