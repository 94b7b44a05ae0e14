#pragma once
// The behavioural evaluation of a trained model (orbitlaw eval's "behaviour" section and its predictions
// file): the model wrapped as a next-position predictor, the rows of a dataset's two-body tracks, and the
// predictions file.
//
// Predictions file (HDF5, h5py-readable), one entry per 1-step row:
//   system, step (int64 [N]); r (AU), star_mass (Msun), dt (yr) [N];
//   position, velocity, acceleration (the truth at t), next (the true x_{t+1}), predicted (the model's
//   x_hat_{t+1}), implied_acceleration ((x_hat - 2 x_t + x_{t-1}) / dt^2) [N, 2], all relative to the star;
// root attributes (strings): format "orbitlaw-behaviour-predictions", schema_version (int), prediction (how
// x_hat is read from the model: the regression head's coordinates, or the expected position under the token
// head's predicted distribution), law_exponent, report (the behaviour JSON).
#include <optional>
#include <string>
#include <vector>

#include "orbitlaw/model/checkpoint.hpp"
#include "orbitlaw/probe/behaviour.hpp"
#include "orbitlaw/simulator/dataset.hpp"

namespace orbitlaw::probe {

inline constexpr const char* kBehaviourPredictionsFormat = "orbitlaw-behaviour-predictions";
inline constexpr int kBehaviourPredictionsSchemaVersion = 1;

// Why the behavioural evaluation cannot run on this model and data (nullopt when it can): it needs the
// heliocentric frame and systems of one planet, so that a sequence is one body's track.
std::optional<std::string> behaviour_unavailable(const model::LoadedModel& model,
                                                 const simulator::DatasetReader& data, int sequences);

// The 1-step rows of the first `sequences` systems, each track cut to the first `positions` observations
// (what eval encodes at the training context) and each window to the last `context` of them.
std::vector<BehaviourRow> read_behaviour_rows(const simulator::DatasetReader& data, int sequences,
                                              int positions, int context);

// The model as a predictor: each window is fed as one sequence (cadence row, then its positions); x_hat is
// the regression head's output, or the token head's expected position over the coordinate bins.
NextPositionPredictor model_predictor(const model::LoadedModel& model, int batch_size);
std::string prediction_kind(const model::LoadedModel& model);

void write_behaviour_predictions(const std::string& path, const std::vector<BehaviourRow>& rows,
                                 const BehaviourReport& report, const std::string& prediction);

}  // namespace orbitlaw::probe
