// Measures our integrators on the outer solar system (Sun, Jupiter..Neptune) over many Jupiter orbits, and
// dataset throughput; prints one JSON object per line so run.sh can set REBOUND's numbers beside them.
//   bench_simulator outer [orbits] [repeats] [initial_conditions.json]
//   bench_simulator throughput [systems] [threads] [preset] [integrator]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "orbitlaw/simulator.hpp"

using namespace orbitlaw::simulator;
using orbitlaw::Json;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Candidate {
  std::string label;
  IntegratorSettings settings;
};

int run_outer(int orbits, int repeats, const std::string& ic_path) {
  SimulationConfig config = preset_defaults("outer-solar-system");
  config.dim = 3;
  const auto initial = sample_system(config, 0, 0).initial;
  const double jupiter_period = 2 * std::numbers::pi *
                                std::sqrt(std::pow(initial.elements[0].a, 3) /
                                          (kGravitationalConstant * (initial.mass.back() + initial.mass[0])));
  const double t_end = orbits * jupiter_period;
  if (!ic_path.empty()) {
    std::ofstream(ic_path)
        << Json{{"G", kGravitationalConstant},  {"mass", initial.mass}, {"position", initial.position},
                {"velocity", initial.velocity}, {"t_end", t_end},       {"orbits", orbits}}
               .dump();
  }
  std::vector<Candidate> candidates;
  auto add = [&](const std::string& label, IntegratorKind kind, double tol, double step) {
    IntegratorSettings s;
    s.kind = kind;
    s.abs_tol = s.rel_tol = tol;
    s.step = step;
    s.max_evaluations = 2'000'000'000;
    s.hill_factor = 0;
    candidates.push_back({label, s});
  };
  add("orbitlaw rkf78 tol 1e-13 (default)", IntegratorKind::kRungeKuttaFehlberg78, 1e-13, 0);
  add("orbitlaw rkf78 tol 1e-15", IntegratorKind::kRungeKuttaFehlberg78, 1e-15, 0);
  add("orbitlaw rkf78 tol 1e-16", IntegratorKind::kRungeKuttaFehlberg78, 1e-16, 0);
  add("orbitlaw bulirsch-stoer tol 1e-13", IntegratorKind::kBulirschStoer, 1e-13, 0);
  add("orbitlaw symplectic dt 10 d", IntegratorKind::kSymplectic, 0, 10.0 / 365.25);
  add("orbitlaw symplectic dt 1 d", IntegratorKind::kSymplectic, 0, 1.0 / 365.25);
  for (const auto& c : candidates) {
    std::vector<double> seconds;
    Trajectory tr;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      tr = integrate(initial, {0.0, t_end}, c.settings);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::printf("%s\n", Json{{"name", c.label},
                             {"energy_error", tr.energy_error},
                             {"angular_momentum_error", tr.angular_momentum_error},
                             {"seconds", median(seconds)},
                             {"evaluations", tr.evaluations},
                             {"completed", tr.abort == Abort::kNone}}
                            .dump()
                            .c_str());
    std::fflush(stdout);
  }
  return 0;
}

int run_throughput(std::int64_t systems, int threads, const std::string& preset,
                   const std::string& integrator) {
  Json resolved;
  auto config = simulation_config_from_json(
      Json{{"preset", preset}, {"systems", systems}, {"integrator", integrator}}, &resolved);
  WriteOptions options;
  options.threads = threads;
  options.resolved_config = resolved;
  const auto path =
      std::filesystem::temp_directory_path() / ("bench_simulator_" + std::to_string(::getpid()) + ".h5");
  const auto summary = write_dataset(config, path.string(), options);
  const auto bytes = std::filesystem::file_size(path);
  std::filesystem::remove(path);
  std::int64_t rejected = 0;
  Json reasons = Json::object();
  for (int r = 0; r < static_cast<int>(Rejection::kCount); ++r) {
    rejected += summary.rejections[r];
    reasons[rejection_name(static_cast<Rejection>(r))] = summary.rejections[r];
  }
  std::printf("%s\n", Json{{"name", "throughput " + preset + " " + integrator},
                           {"systems", summary.systems},
                           {"threads", threads},
                           {"seconds", summary.seconds},
                           {"systems_per_second", summary.systems / summary.seconds},
                           {"bytes", bytes},
                           {"rejected", rejected},
                           {"rejections", reasons}}
                          .dump()
                          .c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "outer";
  try {
    if (mode == "outer") {
      return run_outer(argc > 2 ? std::stoi(argv[2]) : 1000, argc > 3 ? std::stoi(argv[3]) : 3,
                       argc > 4 ? argv[4] : "");
    }
    if (mode == "throughput") {
      return run_throughput(argc > 2 ? std::stoll(argv[2]) : 500, argc > 3 ? std::stoi(argv[3]) : 2,
                            argc > 4 ? argv[4] : "vafa-paper", argc > 5 ? argv[5] : "rkf78");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_simulator: error: %s\n", e.what());
    return 1;
  }
  std::fprintf(
      stderr, "usage: bench_simulator outer [orbits] [repeats] [ic.json] | throughput [systems] [threads]\n");
  return 2;
}
