#pragma once
// orbitlaw compare: per run folder (predictions.h5 + sr.json of one model) and per probe and protocol, the
// measures that say whether the recovered force law is Newton's: probe R^2 and relative error against the
// true forces, each galaxy's law and its equivalence to C m1 m2 / r^2 (C against G = 4 pi^2), the power-law
// exponents (a, b, e) with 95% intervals against (1, 1, -2), the error of each recovered law against the true
// force on held-out rows (test rows outside that galaxy), and agreement across galaxies.
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw::probe {

struct CompareOptions {
  double confidence = 0.95;
  std::vector<std::string> labels;  // model labels per run folder; default: the predictions' model name
};

// Reads each run folder and builds {"newton": ..., "rows": [...]} (see docs in compare.cpp); every number is
// recomputed from predictions.h5 and the law texts of sr.json. Throws Error for a missing or unreadable file.
Json compare_runs(const std::vector<std::string>& run_dirs, const CompareOptions& options);
// The Markdown tables of a compare_runs() result.
std::string compare_markdown(const Json& comparison);

}  // namespace orbitlaw::probe
