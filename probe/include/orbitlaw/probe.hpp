#pragma once
// Public interface of orbitlaw_probe: force probes on trained transformers and the comparison of the force
// laws they imply with Newton's. Torch-free; the model probes (fine-tuning, linear probes) are declared in
// orbitlaw/probe/model_probes.hpp, which includes LibTorch.
#include "orbitlaw/probe/compare.hpp"
#include "orbitlaw/probe/distribution_check.hpp"
#include "orbitlaw/probe/force_dataset.hpp"
#include "orbitlaw/probe/law_search.hpp"
#include "orbitlaw/probe/oracles.hpp"
#include "orbitlaw/probe/predictions.hpp"
#include "orbitlaw/probe/random_features.hpp"
#include "orbitlaw/probe/regression.hpp"
#include "orbitlaw/probe/statistics.hpp"
