// orbitlaw inspect: Describe an orbitlaw HDF5 dataset, or print one system's table.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "cli_common.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/simulator/dataset.hpp"
#include "orbitlaw/simulator/nbody.hpp"

namespace orbitlaw::cli {

namespace {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

std::string cadence_label(double cadence) {
  if (std::abs(cadence - 7.0 / 365.25) < 1e-12) return "1 week";
  if (std::abs(cadence - 0.5) < 1e-12) return "6 months";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g yr", cadence);
  return buffer;
}

// The system whose rows hold file row `row` (-1 when no index entry covers it).
std::int64_t system_of_row(const simulator::DatasetReader::SystemTable& table, std::int64_t row) {
  for (std::size_t k = 0; k < table.row_offset.size(); ++k) {
    const std::int64_t rows = static_cast<std::int64_t>(table.n_bodies[k]) * table.n_steps[k];
    if (row >= table.row_offset[k] && row < table.row_offset[k] + rows) return static_cast<std::int64_t>(k);
  }
  return -1;
}

// The coordinate range a tokenizer bins, and the share outside it above which inspect warns (the model
// library's TokenizerConfig defaults and kClampedWarningFraction; inspect stays LibTorch-free).
struct TokenRange {
  double lo = -50, hi = 50;
  double warning_fraction = 0.01;
};

Error non_finite(const simulator::DatasetReader& reader, const simulator::DatasetReader::SystemTable& table,
                 const char* field, std::int64_t row) {
  return Error("'" + reader.path() + "': system " + std::to_string(system_of_row(table, row)) +
               " has a non-finite " + field + " (row " + std::to_string(row) + " of the file)");
}

// The row fields scanned in blocks before anything is printed, so that a bad file gives one line: every
// value must be finite; positions give the coordinate ranges and the share outside the token range. Very
// large files are sampled from the start (and the summary says so).
struct RowScan {
  std::vector<double> lo, hi;
  double r_max = 0;
  std::int64_t rows = 0, scanned = 0, outside = 0;
};

RowScan scan_rows(const simulator::DatasetReader& reader, const simulator::DatasetReader::SystemTable& table,
                  const TokenRange& range) {
  RowScan scan;
  scan.rows = reader.num_rows();
  scan.scanned = std::min<std::int64_t>(scan.rows, 20'000'000);
  const std::int64_t scanned = scan.scanned;
  const int dim = reader.dim();
  scan.lo.assign(dim, std::numeric_limits<double>::infinity());
  scan.hi.assign(dim, -std::numeric_limits<double>::infinity());
  for (std::int64_t first = 0; first < scanned; first += 1'000'000) {
    const std::int64_t count = std::min<std::int64_t>(1'000'000, scanned - first);
    // Every row field is checked, so a file with NaN or inf anywhere in its trajectories does not look clean.
    for (const char* field : {"velocity", "acceleration", "star_acceleration"}) {
      const auto values = reader.read_row_block(field, first, count);
      for (std::size_t k = 0; k < values.size(); ++k)
        if (!std::isfinite(values[k])) throw non_finite(reader, table, field, first + k / dim);
    }
    const auto block = reader.read_row_block("position", first, count);
    for (std::int64_t r = 0; r < count; ++r) {
      double r2 = 0;
      for (int c = 0; c < dim; ++c) {
        const double x = block[r * dim + c];
        if (!std::isfinite(x)) throw non_finite(reader, table, "position", first + r);
        if (c < 2) scan.outside += !(x >= range.lo && x < range.hi);  // planar tokens bin x and y only
        scan.lo[c] = std::min(scan.lo[c], x);
        scan.hi[c] = std::max(scan.hi[c], x);
        r2 += x * x;
      }
      scan.r_max = std::max(scan.r_max, std::sqrt(r2));
    }
  }
  return scan;
}

// The law the data was generated under: k of F = G m1 m2 / r^k, in its shortest exact decimal form. A file
// without the force_law_exponent attribute was written before the force law existed, under Newton.
void print_force_law(const simulator::DatasetReader& reader) {
  const double k = reader.force_law_exponent();
  char digits[32];
  const auto end = std::to_chars(digits, digits + sizeof digits, k).ptr;
  const std::string exponent(digits, end);
  const char* note = !reader.attributes().contains("force_law_exponent")
                         ? "Newton; no force_law_exponent attribute, written before it existed"
                     : k == simulator::kNewtonExponent ? "Newton"
                                                       : "counterfactual, not Newton";
  std::printf("force law       F = G m1 m2 / r^%s (%s)\n", exponent.c_str(), note);
}

void print_summary(const simulator::DatasetReader& reader, const TokenRange& range) {
  const auto table = reader.read_system_table();
  const RowScan scan = scan_rows(reader, table, range);
  const Json& a = reader.attributes();
  auto text = [&](const char* key) {
    return a.contains(key) ? (a[key].is_string() ? a[key].get<std::string>() : a[key].dump())
                           : std::string("?");
  };
  std::printf("file            %s\n", reader.path().c_str());
  std::printf("format          %s, schema version %s, orbitlaw %s (%s)\n", text("format").c_str(),
              text("schema_version").c_str(), text("orbitlaw_version").c_str(), text("git_revision").c_str());
  std::printf("preset          %s, seed %s, dim %d, integrator %s (abs_tol %s, rel_tol %s)\n",
              text("preset").c_str(), text("seed").c_str(), reader.dim(), text("integrator").c_str(),
              text("abs_tol").c_str(), text("rel_tol").c_str());
  print_force_law(reader);
  if (a.contains("merged_from")) {
    std::printf("merged          %zu shards (virtual dataset)\n", a["merged_from"].size());
  } else if (a.value("shard_count", std::int64_t{1}) > 1) {
    std::printf("shard           %s of %s (systems from %s)\n", text("shard_index").c_str(),
                text("shard_count").c_str(), text("first_system").c_str());
  }
  const auto n = static_cast<std::int64_t>(table.n_bodies.size());
  std::printf("systems         %lld, rows %lld\n", static_cast<long long>(n),
              static_cast<long long>(reader.num_rows()));
  std::int64_t rejected_total = a.value("rejected_total", std::int64_t{0});
  std::string reasons;
  for (const auto& [key, value] : a.items()) {
    if (key.rfind("rejected_", 0) == 0 && key != "rejected_total" && value.is_number() &&
        value.get<std::int64_t>() > 0) {
      reasons += (reasons.empty() ? "" : ", ") + key.substr(9) + " " + value.dump();
    }
  }
  std::printf("rejected draws  %lld%s\n", static_cast<long long>(rejected_total),
              reasons.empty() ? "" : (" (" + reasons + ")").c_str());
  if (n == 0) return;
  std::map<int, std::int64_t> bodies;
  std::map<std::string, std::int64_t> cadences;
  int steps_min = std::numeric_limits<int>::max(), steps_max = 0;
  double span_min = std::numeric_limits<double>::infinity(), span_max = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    ++bodies[table.n_bodies[k]];
    ++cadences[cadence_label(table.cadence[k])];
    steps_min = std::min(steps_min, table.n_steps[k]);
    steps_max = std::max(steps_max, table.n_steps[k]);
    const double span = table.cadence[k] * (table.n_steps[k] - 1);
    span_min = std::min(span_min, span);
    span_max = std::max(span_max, span);
  }
  std::printf("bodies/system  ");
  for (const auto& [count, systems] : bodies) std::printf(" %d:%lld", count, static_cast<long long>(systems));
  std::printf("\ncadences       ");
  for (const auto& [label, systems] : cadences)
    std::printf(" %s:%lld", label.c_str(), static_cast<long long>(systems));
  std::printf("\nsteps/system    %d..%d, time span %.4g..%.4g yr\n", steps_min, steps_max, span_min,
              span_max);
  std::printf("energy error    median %.2e, 99%% %.2e, max %.2e (relative)\n",
              quantile(table.energy_error, 0.5), quantile(table.energy_error, 0.99),
              quantile(table.energy_error, 1.0));
  std::printf("ang. mom. error median %.2e, 99%% %.2e, max %.2e (relative)\n",
              quantile(table.angular_momentum_error, 0.5), quantile(table.angular_momentum_error, 0.99),
              quantile(table.angular_momentum_error, 1.0));
  const char* axes = "xyz";
  const int dim = reader.dim();
  std::printf("position range ");
  for (int c = 0; c < dim; ++c) std::printf(" %c [%.4g, %.4g]", axes[c], scan.lo[c], scan.hi[c]);
  std::printf(" AU; max |r| %.4g AU%s\n", scan.r_max, scan.scanned < scan.rows ? " (first 20M rows)" : "");
  const std::int64_t binned = scan.scanned * std::min(dim, 2);
  const double fraction = binned > 0 ? static_cast<double>(scan.outside) / static_cast<double>(binned) : 0.0;
  std::printf("token range     %lld of %lld x/y coordinates (%.2f%%) outside [%g, %g) AU would be clamped\n",
              static_cast<long long>(scan.outside), static_cast<long long>(binned), 100 * fraction, range.lo,
              range.hi);
  if (fraction > range.warning_fraction) {
    std::fprintf(
        stderr,
        "warning: %.1f%% of the x/y coordinates lie outside [%g, %g) AU; a tokenizer with that range "
        "clamps them to its edge bins (widen tokenizer.lo/hi or use --token-range to check another)\n",
        100 * fraction, range.lo, range.hi);
  }
}

void print_system(const simulator::DatasetReader& reader, std::int64_t index) {
  const auto s = reader.read_system(index);
  std::printf(
      "system %lld: %d bodies (%d planets + star), %d steps, cadence %s, energy error %.2e, "
      "angular momentum error %.2e\n",
      static_cast<long long>(index), s.n_bodies, s.n_bodies - 1, s.n_steps, cadence_label(s.cadence).c_str(),
      s.energy_error, s.angular_momentum_error);
  std::printf("%-10s %14s %12s %10s %10s %10s %10s %10s\n", "body", "mass", "a", "e", "i", "Omega", "omega",
              "M0");
  for (int b = 0; b < s.n_bodies; ++b) {
    const auto& el = s.elements[b];
    std::string name = b == s.star_index() ? "star" : "planet_" + std::to_string(b + 1);
    std::printf("%-10s %14.6e %12.6f %10.6f %10.6f %10.6f %10.6f %10.6f\n", name.c_str(), s.mass[b], el[0],
                el[1], el[2], el[3], el[4], el[5]);
  }
  const char* axes = "xyz";
  std::printf("%6s %12s %10s", "row", "time", "body");
  for (const char* field : {"", "v", "a", "a_star_"}) {
    for (int c = 0; c < s.dim; ++c) std::printf(" %14s", (std::string(field) + axes[c]).c_str());
  }
  std::printf("\n");
  for (int r = 0; r < s.rows(); ++r) {
    const int b = r % s.n_bodies;
    std::string name = b == s.star_index() ? "star" : "planet_" + std::to_string(b + 1);
    std::printf("%6d %12.6f %10s", r, s.time[r / s.n_bodies], name.c_str());
    for (const Eigen::MatrixXd* m : {&s.position, &s.velocity, &s.acceleration, &s.star_acceleration}) {
      for (int c = 0; c < s.dim; ++c) std::printf(" %14.6e", (*m)(r, c));
    }
    std::printf("\n");
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* sub = app.add_subcommand("inspect", "Describe an orbitlaw HDF5 dataset");
  auto& options = add_config_options(sub);
  static std::string path;
  static std::int64_t system = 0;
  static bool attributes = false;
  static std::vector<double> token_range;
  sub->add_option("file", path, "Dataset written by orbitlaw simulate")->required();
  sub->add_option("--system", system, "Print the full table of system K (0-based)")
      ->check(whole_number_in(std::numeric_limits<std::int64_t>::min(),
                              std::numeric_limits<std::int64_t>::max()));
  sub->add_flag("--attributes", attributes, "Print all root attributes as JSON");
  sub->add_option(
         "--token-range", token_range,
         "LO HI: count the x/y coordinates a tokenizer over [LO, HI) AU would clamp (default -50 50)")
      ->expected(2);
  sub->callback([sub, &options] {
    ConfigReader reader(options.load(), "inspect config");
    reader.finish();
    simulator::DatasetReader dataset(path);
    if (attributes) {
      std::printf("%s\n", dataset.attributes().dump(2).c_str());
    } else if (sub->count("--system") > 0) {
      print_system(dataset, system);
    } else {
      TokenRange range;
      if (!token_range.empty()) {
        range.lo = token_range[0];
        range.hi = token_range[1];
        if (!(range.lo < range.hi) || !std::isfinite(range.lo) || !std::isfinite(range.hi))
          throw Error("--token-range needs finite LO < HI, got " + std::to_string(range.lo) + " " +
                      std::to_string(range.hi));
      }
      print_summary(dataset, range);
    }
  });
}

}  // namespace orbitlaw::cli
