#pragma once
// What a resumed training must share with the run it continues: a fingerprint of its inputs (the data and
// validation files' checksums) and of the settings that decide what it learns (the resolved config without
// the keys that only say how long, where or how verbosely it runs). Stored in every checkpoint; a resume that
// differs is refused unless allowed, and each segment of the run is recorded in its provenance.
#include <string>

#include "orbitlaw/common/config.hpp"
#include "orbitlaw/model/train.hpp"

namespace orbitlaw::model::detail {

// {"inputs": {"data": checksum, "val": checksum or null}, "settings": resolved config less
// kMayChangeOnResume}.
Json resume_fingerprint(const TrainRequest& request);

// The first difference between the fingerprint stored with a checkpoint and the current one ("" when none):
// e.g. "train.lr: 0.003 -> 0.001" or "the data file's contents".
std::string resume_difference(const Json& stored, const Json& current);

}  // namespace orbitlaw::model::detail
