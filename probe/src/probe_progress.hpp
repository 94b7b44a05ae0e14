#pragma once
// Resuming a killed `orbitlaw probe`: the run records, in OUT/probe.progress.json, each part it has finished
// (the model probes, whose outputs are predictions.h5; then each law search), under a fingerprint of
// everything that decides the results (the resolved config, the checkpoint's checksum, the data file, the
// orbitlaw revision). `--resume` reuses the finished parts when the fingerprint matches and predictions.h5
// is the file the record names; a run without --resume starts afresh. The record is removed once the probe
// stage's completion record is written.
#include <optional>
#include <string>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw::probe::detail {

class ProbeProgress {
 public:
  // resume = false discards any earlier record. resume = true with a record of another fingerprint throws
  // Error (one line: what differs); with no record it starts afresh.
  ProbeProgress(std::string dir, Json fingerprint, bool resume);

  // True when the model probes finished in an earlier run and `predictions_path` is still their output.
  bool predictions_finished(const std::string& predictions_path) const;
  void predictions_written(const std::string& predictions_path);

  // The sr.json entry of a law search the earlier run finished, if any.
  std::optional<Json> finished_search(const std::string& probe, const std::string& protocol) const;
  void search_finished(const std::string& probe, const std::string& protocol, const Json& search);

  void remove() const;  // the stage is complete: nothing left to resume

 private:
  void save() const;
  std::string path_;
  Json record_;
};

}  // namespace orbitlaw::probe::detail
