// `orbitlaw probe` for the force-vector task: dataset, probes, predictions.h5 (the arrows of the figure),
// probe.json with each probe's vector R^2. No law search: the laws are searched on force magnitudes.
#include "run_vector.hpp"

#include <cstdio>
#include <filesystem>
#include <limits>

#include "orbitlaw/common/stage_record.hpp"
#include "orbitlaw/probe/predictions.hpp"

namespace orbitlaw::probe::detail {

ProbeRunSummary run_vector_task(const VectorTask& task, const ProbeRunPaths& paths) {
  std::filesystem::create_directories(paths.out);
  begin_stage(paths.out, "probe");  // until the end, the folder reads as incomplete
  const simulator::DatasetReader data(paths.data);
  const ForceVectorDataset dataset = build_force_vector_dataset(data, task.split);
  task.log("force-vector dataset: " + std::to_string(dataset.systems.size()) + " sequences; " +
           std::to_string(dataset.train.size()) + " train / " + std::to_string(dataset.validation.size()) +
           " validation labels, " + std::to_string(dataset.test.size()) + " test rows");

  VectorPredictions predictions;
  predictions.rows = dataset.test;
  predictions.model = task.label;
  predictions.config = task.resolved_config;
  Json details = Json::object();
  for (const auto& probe : task.probes) {
    if (probe == "finetune") {
      const EncodedSystems encoded(data, dataset.systems, *task.model);
      // Only positions of the test rows reach the model probe: a copy without their vectors.
      ForceVectorRows test_inputs = dataset.test;
      test_inputs.force.setConstant(std::numeric_limits<double>::quiet_NaN());
      const VectorFineTuneResult result = fine_tune_vectors(*task.model, encoded, dataset.train,
                                                            dataset.validation, test_inputs, task.finetune);
      details[probe] = result.json();
      details[probe]["options"] = task.finetune.to_json();
      predictions.probes.emplace_back(probe, result.test_prediction);
    } else if (probe == "knn") {
      predictions.probes.emplace_back(probe, knn_force_vectors(dataset.train, dataset.test, task.knn_k));
      details[probe] = Json{{"k", task.knn_k},
                            {"state", "position relative to the star, ln planet mass"},
                            {"fitted_on", "train labels"}};
    } else if (probe == "newton") {
      predictions.probes.emplace_back(probe, dataset.test_newton);
      details[probe] = Json{{"law", "sum_j G m_i m_j (r_j - r_i) / |r_j - r_i|^3, normalised per sequence"}};
    }
  }
  predictions.probe_details = details;
  predictions.provenance =
      predictions_provenance(task.resolved_config, task.seed, task.library_versions, paths);

  ProbeRunSummary out;
  const std::filesystem::path dir(paths.out);
  out.predictions_path = (dir / "predictions.h5").string();
  write_vector_predictions(out.predictions_path, predictions);
  task.log("wrote " + out.predictions_path);

  Json accuracy = Json::object();
  for (const auto& [name, values] : predictions.probes) {
    const double r2 = vector_r_squared(dataset.test.force, values);
    accuracy[name] = Json{{"r2", r2}};
    char line[160];
    std::snprintf(line, sizeof line, "%s: test R^2 of the normalised force vectors %.4f", name.c_str(), r2);
    task.log(line);
  }
  out.summary = Json{{"model", task.label},
                     {"task", "vector"},
                     {"checkpoint", paths.checkpoint},
                     {"data", paths.data},
                     {"split",
                      {{"sequences", dataset.systems.size()},
                       {"train_rows", dataset.train.size()},
                       {"validation_rows", dataset.validation.size()},
                       {"test_rows", dataset.test.size()}}},
                     {"accuracy", accuracy},
                     {"probes", details},
                     {"config", task.resolved_config}};
  write_summary_and_provenance(out, paths, task.resolved_config, task.seed, task.library_versions);
  return out;
}

}  // namespace orbitlaw::probe::detail
