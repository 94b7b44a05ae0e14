#pragma once
// What a probe run is given to read and write, and what it wrote: shared by the run (run.hpp) and its two
// tasks, so that the tasks need not include the run that calls them.
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

}  // namespace orbitlaw::probe
