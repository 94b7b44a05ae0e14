#include <cmath>
#include <limits>

#include "orbitlaw/common/error.hpp"
#include "orbitlaw/probe/behaviour.hpp"
#include "orbitlaw/probe/law_search.hpp"
#include "orbitlaw/probe/predictions.hpp"

namespace orbitlaw::probe {

namespace {

// The 1-step rows as a probe's predictions file holds them, with |a_impl| as the one "probe": every row is
// observable and equally near (the galaxies are drawn from all of them).
Predictions implied_predictions(const std::vector<BehaviourRow>& rows, const BehaviourReport& report) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  Predictions p;
  p.target = ProbeTarget::kAcceleration;
  p.rows.r.resize(n);
  p.rows.m1.resize(n);
  p.rows.m2.resize(n);
  p.rows.force.resize(n);
  p.rows.position = Eigen::MatrixXd::Zero(n, 2);
  p.rows.velocity = Eigen::MatrixXd::Zero(n, 2);
  p.rows.star_position = Eigen::MatrixXd::Zero(n, 2);
  p.rows.star_velocity = Eigen::MatrixXd::Zero(n, 2);
  p.rows.deviation = Eigen::VectorXd::Constant(n, std::numeric_limits<double>::infinity());
  p.nearest_train_distance = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd implied(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& row = rows[static_cast<std::size_t>(i)];
    p.rows.system.push_back(row.system);
    p.rows.row.push_back(row.step);
    p.rows.r(i) = row.window.positions.back().norm();
    p.rows.m1(i) = row.planet_mass;
    p.rows.m2(i) = row.star_mass;
    p.rows.force(i) = row.acceleration.norm();
    p.rows.position.row(i) = row.window.positions.back();
    p.rows.velocity.row(i) = row.velocity;
    implied(i) = report.implied_acceleration[static_cast<std::size_t>(i)].norm();
  }
  p.probes.emplace_back("a_impl", implied);
  return p;
}

}  // namespace

Json search_implied_laws(const std::vector<BehaviourRow>& rows, const BehaviourReport& report,
                         const Json& settings) {
  if (!settings.is_object()) throw Error("eval config: law_search must be an object");
  Json keys = settings;
  const std::string protocol = keys.value("protocol", std::string("extended"));
  keys.erase("protocol");
  if (protocol != "published" && protocol != "extended")
    throw Error("eval config: law_search.protocol must be 'published' or 'extended' (got '" + protocol +
                "')");
  ConfigReader reader(keys, "eval config.law_search");
  auto options = law_search_options_from_config(
      reader, protocol == "published" ? published_protocol() : extended_protocol());
  reader.finish();
  options.observable_only = false;
  options.nearest_rows = static_cast<int>(rows.size());
  const auto search = search_laws(implied_predictions(rows, report), "a_impl", options);
  Json galaxies = Json::array();
  for (const auto& g : search.galaxies) {
    galaxies.push_back(
        Json{{"law", g.law},
             {"srbench", g.verdicts.law.equivalent},
             {"strict", g.verdicts.law.strict},
             {"exponents", g.verdicts.exponents},
             {"c_over_g", g.verdicts.law.c_over_g},
             {"exponent_fit", g.verdicts.exponent_fit},
             {"r_exponent", std::isfinite(g.r_exponent) ? Json(g.r_exponent) : Json(nullptr)}});
  }
  return Json{{"protocol", protocol},
              {"skipped", search.skipped},
              {"galaxies", galaxies},
              {"newton_galaxies", newton_galaxies(search)},
              {"seconds", search.seconds}};
}

}  // namespace orbitlaw::probe
