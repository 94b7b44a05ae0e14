// The evolutionary search. Several populations evolve independently for one iteration (population_size
// variations each, in parallel threads), then meet at a synchronisation point: their halls of fame merge and
// each population takes in copies of Pareto-front members (migration). Every population owns its random
// generator, seeded from (seed, restart, population), and the synchronisation order is fixed, so a given seed
// gives the same result with any number of threads (unless a time limit cuts an iteration short).
//
// Selection: tournaments on fitness = ln(loss / loss of the best constant) + parsimony * complexity; the
// oldest member is replaced by each child (age-regularised evolution). Every child has its constants fitted
// by Levenberg-Marquardt (kSearchFit; on a batch when batch_size is set) before its loss on all fitted rows
// is measured; the final hall of fame is refitted thoroughly on all of them. The fitted rows are every row
// but those held out (Options::holdout_fraction), on which the final front's best entry is chosen.
#include <Eigen/QR>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <thread>

#include "constant_fit.hpp"
#include "evaluator.hpp"
#include "losses.hpp"
#include "mutations.hpp"
#include "orbitlaw/common/config.hpp"
#include "orbitlaw/common/error.hpp"
#include "orbitlaw/common/progress.hpp"
#include "orbitlaw/sr.hpp"
#include "residual_structure.hpp"
#include "scaling.hpp"

namespace orbitlaw::sr {
namespace {

// Random streams: population p of restart r draws from Xoshiro256(seed, r, p); the held-out split from its
// own stream, numbered beyond any restart.
constexpr std::uint64_t kHoldoutStream = 0x686f6c64;  // "hold"
constexpr std::uint64_t kRefineStream = 0x72656669;   // "refi"

using Clock = std::chrono::steady_clock;
constexpr double kRestartShare = 0.25;  // share of children whose constants get the extra LM starts

struct Member {
  Expr expr;
  double loss = INFINITY;
  double fitness = INFINITY;
  std::int64_t birth = 0;
};

// Best member per complexity.
class HallOfFame {
 public:
  explicit HallOfFame(int max_size) : slots_(max_size + 1) {}
  void offer(const Member& m) {
    int c = m.expr.complexity();
    if (c >= static_cast<int>(slots_.size()) || !std::isfinite(m.loss)) return;
    if (!slots_[c] || m.loss < slots_[c]->loss) slots_[c] = m;
  }
  void merge(const HallOfFame& other) {
    for (const auto& slot : other.slots_) {
      if (slot) offer(*slot);
    }
  }
  // Members not dominated by a simpler one, by increasing complexity.
  std::vector<Member> pareto() const {
    std::vector<Member> out;
    double best = INFINITY;
    for (const auto& slot : slots_) {
      if (slot && slot->loss < best) {
        out.push_back(*slot);
        best = slot->loss;
      }
    }
    return out;
  }
  double min_loss() const {
    double best = INFINITY;
    for (const auto& slot : slots_) {
      if (slot) best = std::min(best, slot->loss);
    }
    return best;
  }
  // Applies `refine` to every member; it may change the member's constants and loss, not its form.
  template <typename Refine>
  void refine_each(Refine&& refine) {
    for (auto& slot : slots_) {
      if (slot) refine(*slot);
    }
  }
  std::vector<Member> all() const {
    std::vector<Member> out;
    for (const auto& slot : slots_) {
      if (slot) out.push_back(*slot);
    }
    return out;
  }

 private:
  std::vector<std::optional<Member>> slots_;
};

// Read-only data shared by all populations of one search.
struct Problem {
  const Eigen::MatrixXd& X;
  Eigen::ArrayXd y;
  std::optional<Eigen::ArrayXd> weights;
  const Options& options;
  OperatorSet operators;
  double reference_loss = 1;  // loss of the best constant model, to make fitness scale-free
  double loss_floor = 0;      // losses below this are rounding noise (see loss_floor())
};

class Population {
 public:
  Population(const Problem& problem, Xoshiro256 rng)
      : problem_(problem),
        rng_(rng),
        mutator_(problem.operators, problem.options.max_size, problem.options.max_depth),
        evaluator_(problem.X),
        hall_(problem.options.max_size) {
    const Options& o = problem.options;
    choose_batch();  // the first members' constants too are fitted on a batch, as every child's
    for (int k = 0; k < o.population_size; ++k) {
      Expr e = mutator_.random_tree(rng_.uniform_int(1, std::min(o.max_size, 7)), rng_);
      if (!mutator_.fits(e)) e = mutator_.random_tree(1, rng_);
      members_.push_back(make_member(std::move(e)));
    }
  }

  // population_size variations; stops early past `deadline`.
  void evolve(Clock::time_point deadline, bool has_deadline) {
    const Options& o = problem_.options;
    choose_batch();
    for (int k = 0; k < o.population_size; ++k) {
      if (has_deadline && (k % 8 == 0) && Clock::now() > deadline) break;
      Expr child;
      if (uniform() < 0.1) {
        child = mutator_.crossover(tournament().expr, tournament().expr, rng_);
      } else {
        child = mutator_.mutate(tournament().expr, rng_);
      }
      if (uniform() < 0.5) child = fold_constants(child);
      replace_oldest(make_member(std::move(child)));
    }
  }

  void migrate(const std::vector<Member>& front) {
    if (front.empty()) return;
    int count = static_cast<int>(std::lround(problem_.options.migration_fraction * members_.size()));
    for (int k = 0; k < count; ++k) {
      Member m = front[rng_.below(front.size())];
      m.birth = ++clock_;
      members_[rng_.below(members_.size())] = std::move(m);
    }
  }

  const HallOfFame& hall() const { return hall_; }
  std::int64_t evaluations() const { return evaluations_; }

 private:
  double uniform() { return rng_.uniform(); }

  void choose_batch() {
    const Options& o = problem_.options;
    const Eigen::Index rows = problem_.X.rows();
    if (o.batch_size <= 0 || o.batch_size >= rows) return;
    std::vector<Eigen::Index> all(rows);
    for (Eigen::Index i = 0; i < rows; ++i) all[i] = i;
    orbitlaw::shuffle(all, rng_);
    all.resize(o.batch_size);
    std::sort(all.begin(), all.end());
    batch_X_ = problem_.X(all, Eigen::all);
    batch_y_ = problem_.y(all);
    if (problem_.weights) batch_w_ = (*problem_.weights)(all);
    batch_evaluator_.emplace(batch_X_);
  }

  Member make_member(Expr e) {
    const Options& o = problem_.options;
    Member m;
    if (e.constant_count() > 0) {
      // Children inherit fitted constants, so one start usually suffices; restarts are spent on a share of
      // them.
      const int restarts = uniform() < kRestartShare ? o.constant_restarts : 0;
      if (batch_evaluator_) {
        FitTarget target{*batch_evaluator_, batch_y_, problem_.weights ? &batch_w_ : nullptr, o.loss,
                         kSearchFit};
        fit_constants(e, target, o.optimizer_iterations, restarts, rng_, evaluations_);
      } else {
        FitTarget target{evaluator_, problem_.y, problem_.weights ? &*problem_.weights : nullptr, o.loss,
                         kSearchFit};
        fit_constants(e, target, o.optimizer_iterations, restarts, rng_, evaluations_);
      }
    }
    ++evaluations_;
    m.loss =
        loss_of(evaluator_.values(e), problem_.y, o.loss, problem_.weights ? &*problem_.weights : nullptr);
    m.fitness = std::isfinite(m.loss)
                    ? std::log(std::max(m.loss, problem_.loss_floor) / problem_.reference_loss) +
                          o.parsimony * e.complexity()
                    : INFINITY;
    m.expr = std::move(e);
    m.birth = ++clock_;
    hall_.offer(m);
    return m;
  }

  const Member& tournament() {
    const int n = static_cast<int>(members_.size());
    const Member* best = nullptr;
    for (int k = 0; k < problem_.options.tournament_size; ++k) {
      const Member& m = members_[rng_.uniform_int(0, n - 1)];
      if (!best || m.fitness < best->fitness) best = &m;
    }
    return *best;
  }

  void replace_oldest(Member m) {
    auto oldest = std::min_element(members_.begin(), members_.end(),
                                   [](const Member& a, const Member& b) { return a.birth < b.birth; });
    *oldest = std::move(m);
  }

  const Problem& problem_;
  Xoshiro256 rng_;  // orbitlaw/common/random.hpp: the same stream on every standard library
  Mutator mutator_;
  Evaluator evaluator_;
  HallOfFame hall_;
  std::vector<Member> members_;
  std::int64_t clock_ = 0;
  std::int64_t evaluations_ = 0;
  Eigen::MatrixXd batch_X_;
  Eigen::ArrayXd batch_y_, batch_w_;
  std::optional<Evaluator> batch_evaluator_;
};

void check_data(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const std::vector<std::string>& names,
                const Eigen::VectorXd* weights) {
  if (X.rows() != y.size()) {
    throw Error("X has " + std::to_string(X.rows()) + " rows but y has " + std::to_string(y.size()));
  }
  // A formula with a few constants fits a handful of points exactly: any "law" found there is noise.
  if (X.rows() < kMinimumRows) {
    throw Error("symbolic regression needs at least " + std::to_string(kMinimumRows) + " data rows, got " +
                std::to_string(X.rows()));
  }
  if (static_cast<Eigen::Index>(names.size()) != X.cols()) {
    throw Error("X has " + std::to_string(X.cols()) + " columns but " + std::to_string(names.size()) +
                " names were given");
  }
  check_variable_names(names);  // the front's laws must parse back with these names
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      if (!std::isfinite(X(i, j))) {
        throw Error("column '" + names[j] + "' row " + std::to_string(i + 1) + " is not finite");
      }
    }
  }
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) throw Error("y row " + std::to_string(i + 1) + " is not finite");
  }
  if (weights) {
    if (weights->size() != y.size()) throw Error("weights and y differ in length");
    if (!weights->allFinite() || (weights->array() < 0).any() || weights->sum() <= 0) {
      throw Error("weights must be finite, non-negative and not all zero");
    }
  }
}

// The rows held out from the fit: a share of them drawn from the seed, in increasing order; none in a table
// of fewer than holdout_min_rows rows, and never so many that fewer than kMinimumRows are left to fit.
std::vector<Eigen::Index> held_out_rows(Eigen::Index rows, const Options& o) {
  if (!(o.holdout_fraction > 0) || rows < o.holdout_min_rows) return {};
  const Eigen::Index count = std::min<Eigen::Index>(
      std::llround(o.holdout_fraction * static_cast<double>(rows)), rows - kMinimumRows);
  if (count < 2) return {};  // a standard error needs two rows
  std::vector<Eigen::Index> order(static_cast<std::size_t>(rows));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  Xoshiro256 rng(o.seed, kHoldoutStream, 0);  // its own stream, apart from the populations'
  orbitlaw::shuffle(order, rng);
  order.resize(static_cast<std::size_t>(count));
  std::sort(order.begin(), order.end());
  return order;
}

// The rows of 0..rows-1 not in `held` (sorted).
std::vector<Eigen::Index> complement(Eigen::Index rows, const std::vector<Eigen::Index>& held) {
  std::vector<Eigen::Index> out;
  std::size_t k = 0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    if (k < held.size() && held[k] == i) {
      ++k;
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// The entry's loss on the held-out rows and its standard error (from the spread of the per-row losses).
void set_holdout_loss(FrontEntry& e, const Eigen::MatrixXd& X, const Eigen::ArrayXd& y, LossKind kind,
                      const Eigen::ArrayXd* weights) {
  const Eigen::ArrayXd prediction = e.expr.evaluate(X);
  e.holdout_loss = loss_of(prediction, y, kind, weights);
  if (!std::isfinite(e.holdout_loss)) {
    e.holdout_loss = e.holdout_loss_se = INFINITY;
    return;
  }
  Eigen::ArrayXd values = row_losses(prediction, y, kind);
  if (weights) values *= *weights / weights->mean();
  const double n = static_cast<double>(values.size());
  e.holdout_loss_se = std::sqrt((values - values.mean()).square().sum() / (n - 1) / n);
}

// The rows held out from the fit, as the search measures them.
struct HeldOut {
  Eigen::MatrixXd X;
  Eigen::ArrayXd y;
  std::optional<Eigen::ArrayXd> weights;
  const Eigen::ArrayXd* weights_or_null() const { return weights ? &*weights : nullptr; }
};

// The per-row losses of `expr` on the held-out rows, weighted so that their mean is the held-out loss; empty
// where the expression is not finite on some row.
Eigen::ArrayXd held_out_row_losses(const Expr& expr, const HeldOut& held, LossKind kind) {
  const Eigen::ArrayXd prediction = expr.evaluate(held.X);
  if (!prediction.allFinite()) return {};
  Eigen::ArrayXd values = row_losses(prediction, held.y, kind);
  if (held.weights) values *= *held.weights / held.weights->mean();
  if (!values.allFinite()) return {};
  return values;
}

double standard_error(const Eigen::ArrayXd& values) {
  const double n = static_cast<double>(values.size());
  return std::sqrt((values - values.mean()).square().sum() / (n - 1) / n);
}

// Where a front stands on the held-out rows: the per-row losses of its lowest-loss entry there, and the
// complexity of the entry the final selection would choose (the simplest within one standard error of that
// lowest; see make_front). Empty rows: no entry is finite on every held-out row.
struct HeldOutStanding {
  Eigen::ArrayXd best_rows;
  int best = -1;  // that entry's index in the front
  int selected_complexity = std::numeric_limits<int>::max();
};

HeldOutStanding held_out_standing(const std::vector<Member>& front, const HeldOut& held, LossKind kind) {
  HeldOutStanding standing;
  std::vector<Eigen::ArrayXd> rows(front.size());
  int lowest = -1;
  for (std::size_t k = 0; k < front.size(); ++k) {
    rows[k] = held_out_row_losses(front[k].expr, held, kind);
    if (rows[k].size() > 1 && (lowest < 0 || rows[k].mean() < rows[lowest].mean()))
      lowest = static_cast<int>(k);
  }
  if (lowest < 0) return standing;
  standing.best_rows = rows[lowest];
  standing.best = lowest;
  const double level = rows[lowest].mean() + standard_error(rows[lowest]);
  for (std::size_t k = 0; k < front.size(); ++k) {
    if (rows[k].size() > 1 && rows[k].mean() <= level) {
      standing.selected_complexity = front[k].expr.complexity();
      break;
    }
  }
  return standing;
}

// Whether `now`'s best entry is better than `before`'s row by row: the mean of the per-row differences of
// their held-out losses above twice its standard error.
bool lower_row_by_row(const Eigen::ArrayXd& now, const Eigen::ArrayXd& before) {
  if (now.size() == 0) return false;
  if (before.size() == 0) return true;
  const Eigen::ArrayXd gain = before - now;
  return gain.mean() > 2 * standard_error(gain);
}

// The noise floor, seen from the held-out rows. Each iteration the front's lowest held-out loss is measured,
// and the entry the final selection would choose (the simplest within one standard error of that lowest; see
// make_front). On noisy data the search keeps lowering the loss on the fitted rows with terms that fit their
// noise; on the held-out rows those terms gain nothing. A gain is either
//   - a front entry better than the best so far on the held-out rows, row by row: the mean of the per-row
//     differences above twice their standard error. Paired, because on noiseless data the per-row losses
//     spread over decades and a real, steady improvement stays below one standard error of the loss itself
//     (a plateau test on the loss alone stopped noiseless searches); twice, because the front changes often
//     and noise-fitting terms would pass one standard error by chance one time in six;
//   - or a simpler selected entry (at high noise the law is often found first with a spare term,
//     1/(x + y - 0.0096), and its own form, as good on held-out rows, later).
// A long run without a gain means nothing left to find but noise. "Long" grows with the search: at least
// `patience` iterations, and at least as many as the search took to reach its last gain, since a search that
// needed 80 iterations for one step may need 80 for the next (a fixed 30 stopped searches on 500 rows within
// a second, before laws they found later).
class HeldOutPlateau {
 public:
  HeldOutPlateau(const HeldOut& held, LossKind kind, int patience)
      : held_(held), kind_(kind), patience_(patience) {}
  // Takes this iteration's front (by increasing complexity); returns whether the search is at the plateau.
  bool update(const std::vector<Member>& front) {
    ++iteration_;
    const HeldOutStanding now = held_out_standing(front, held_, kind_);
    if (now.best_rows.size() > 0) {
      const bool better = lower_row_by_row(now.best_rows, best_rows_);
      if (better) best_rows_ = now.best_rows;
      if (better || now.selected_complexity < selected_complexity_) last_gain_ = iteration_;
      selected_complexity_ = now.selected_complexity;
    }
    return iteration_ - last_gain_ >= std::max(patience_, last_gain_);
  }

 private:
  const HeldOut& held_;
  LossKind kind_;
  int patience_;
  Eigen::ArrayXd best_rows_;  // per-row held-out losses of the best entry so far
  int selected_complexity_ = std::numeric_limits<int>::max();
  int iteration_ = 0, last_gain_ = 0;
};

// A plateau is confirmed as the noise floor by another restart that reaches it without a gain (the merged
// front neither lower row by row nor with a simpler selected entry); a search stuck far from a noiseless law
// plateaus too, and a fresh restart usually gets past it. Restarts run to confirm a plateau go beyond
// Options::restarts by at most this many.
constexpr int kPlateauConfirmingRestarts = 3;

// Whether `expr` leaves a residual with structure on the fitted rows (residual_structure.hpp): a smooth
// function of the inputs, the part of a law not found, rather than noise.
bool leaves_structure(const Expr& expr, const Problem& problem) {
  const Eigen::ArrayXd residual = loss_residuals(expr.evaluate(problem.X), problem.y, problem.options.loss);
  return neighbour_variance_ratio(problem.X, residual) < problem.options.structured_below;
}

bool has_op(const OperatorSet& set, Op op) {
  return std::find(set.unary.begin(), set.unary.end(), op) != set.unary.end() ||
         std::find(set.binary.begin(), set.binary.end(), op) != set.binary.end();
}

std::string short_number(double v, const char* format = "%.4g") {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// When every input and the target are positive and the operators cannot write a real power, fits the power
// law y = c * x1^a1 * x2^a2 ... by least squares in logarithms. If it beats `best_loss` (the front's most
// accurate loss) by more than a factor 2 and some exponent is not a whole number (nor a half with sqrt on),
// the operator it needs is off: returns a one-line notice saying so, else nothing.
std::optional<std::string> power_law_notice(const Eigen::MatrixXd& X, const Eigen::ArrayXd& y,
                                            const std::vector<std::string>& names, const OperatorSet& set,
                                            LossKind kind, const Eigen::ArrayXd* weights, double best_loss,
                                            double floor, const Scaling& scaling) {
  if (has_op(set, Op::kPow) || (has_op(set, Op::kExp) && has_op(set, Op::kLog))) return std::nullopt;
  if (!((X.array() > 0).all() && (y > 0).all())) return std::nullopt;
  Eigen::MatrixXd A(X.rows(), X.cols() + 1);
  A.col(0).setOnes();
  A.rightCols(X.cols()) = X.array().log().matrix();
  const Eigen::VectorXd coef = A.colPivHouseholderQr().solve(y.log().matrix());
  const double power_loss = loss_of((A * coef).array().exp(), y, kind, weights);
  if (!(std::max(power_loss, floor) < 0.5 * std::max(best_loss, floor))) return std::nullopt;
  const bool sqrt_on = has_op(set, Op::kSqrt);
  bool needs_pow = false, needs_root = false;
  // Fitted on the scaled data; its constant is printed in the data's units, like the front's laws.
  std::string law = short_number(std::exp(coef[0] + scaling.log_power_law_factor(coef.tail(X.cols()))));
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    const double a = coef[j + 1];
    if (std::abs(a) < 0.05) continue;  // this input hardly matters
    law += "*" + names[j] + "^" + short_number(a, "%.3g");
    if (std::abs(a - std::round(a)) < 0.05) continue;  // * and / write whole powers
    if (std::abs(2 * a - std::round(2 * a)) < 0.1) {
      needs_root = needs_root || !sqrt_on;
    } else {
      needs_pow = true;
    }
  }
  if (!needs_pow && !needs_root) return std::nullopt;
  return "a power law fitted in logarithms beats every expression found (loss " + short_number(power_loss) +
         " against " + short_number(best_loss) + "): " + law + "; its exponents need " +
         (needs_pow ? "the operator pow" : "the operator sqrt or pow") + ", which is off";
}

// One restart: fresh populations evolved for options.iterations, until the deadline, until an exact fit
// (loss <= stop_loss) has kept its simplest form for target_patience iterations, or, with held-out rows,
// until they show the noise floor (HeldOutPlateau). Its hall of fame joins `overall`.
// Returns why it stopped (Result::stop_reason).
std::string run_restart(const Problem& problem, int restart, double stop_loss, Clock::time_point deadline,
                        bool has_deadline, const HeldOut* held, HallOfFame& overall, Result& result,
                        std::int64_t& evaluations, Progress* progress) {
  const Options& options = problem.options;
  std::vector<Population> populations;
  populations.reserve(options.populations);
  for (int p = 0; p < options.populations; ++p)
    populations.emplace_back(problem, Xoshiro256(options.seed, restart, p));
  HallOfFame hall(options.max_size);
  int simplest_at_target = -1, unchanged = 0;
  std::optional<HeldOutPlateau> plateau;
  if (held && options.holdout_patience > 0) plateau.emplace(*held, options.loss, options.holdout_patience);
  std::string stop = "iterations";
  const int threads = std::min(options.threads, options.populations);
  for (int iteration = 0; iteration < options.iterations && stop == "iterations"; ++iteration) {
    auto work = [&](int first) {
      for (int p = first; p < options.populations; p += threads)
        populations[p].evolve(deadline, has_deadline);
    };
    if (threads <= 1) {
      work(0);
    } else {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
      for (auto& t : pool) t.join();
    }
    for (const auto& population : populations) hall.merge(population.hall());
    std::vector<Member> front = hall.pareto();
    for (auto& population : populations) population.migrate(front);
    ++result.iterations_run;
    if (progress) {
      progress->advance();
      progress->set_note("best loss " + std::to_string(hall.min_loss()));
    }
    if (has_deadline && Clock::now() > deadline) {
      stop = "time limit";
      break;
    }
    if (hall.min_loss() <= stop_loss) {
      int simplest = options.max_size + 1;
      for (const Member& m : front) {
        if (m.loss <= stop_loss) simplest = std::min(simplest, m.expr.complexity());
      }
      unchanged = simplest == simplest_at_target ? unchanged + 1 : 0;
      simplest_at_target = simplest;
      if (unchanged >= options.target_patience) stop = "exact fit";
    }
    if (stop == "iterations" && plateau && plateau->update(front)) stop = "held-out plateau";
  }
  for (const auto& population : populations) evaluations += population.evaluations();
  overall.merge(hall);
  return stop;
}

// The search fits its children's constants quickly (kSearchFit), and on a batch of rows when batch_size is
// set: each hall-of-fame member's constants are refitted thoroughly by Levenberg-Marquardt on every fitted
// row, starting from its own, and kept where that lowers its loss there.
void refine_on_fitted_rows(HallOfFame& hall, const Problem& problem, std::int64_t& evaluations) {
  const Options& o = problem.options;
  Evaluator evaluator(problem.X);
  const FitTarget target{evaluator, problem.y, problem.weights ? &*problem.weights : nullptr, o.loss};
  Xoshiro256 rng(o.seed, kRefineStream, 0);
  hall.refine_each([&](Member& m) {
    if (m.expr.constant_count() == 0) return;
    const double loss = fit_constants(m.expr, target, o.optimizer_iterations, 0, rng, evaluations);
    if (std::isfinite(loss)) m.loss = std::min(m.loss, loss);
  });
}

// The hall of fame as front candidates, each shown in canonical form when that form evaluates to the same
// loss on the fitted rows.
std::vector<FrontEntry> front_candidates(const HallOfFame& overall, const Problem& problem,
                                         const Eigen::MatrixXd& X_fit, const Eigen::ArrayXd* weights) {
  std::vector<FrontEntry> candidates;
  for (const Member& m : overall.all()) {
    FrontEntry entry;
    entry.complexity = m.expr.complexity();
    entry.loss = m.loss;
    entry.expr = m.expr;
    Expr canonical = simplify(m.expr);
    const double canonical_loss =
        loss_of(canonical.evaluate(X_fit), problem.y, problem.options.loss, weights);
    if (std::isfinite(canonical_loss) &&
        canonical_loss <= m.loss * (1 + 1e-6) + 1e-12 * problem.reference_loss)
      entry.expr = canonical;
    candidates.push_back(std::move(entry));
  }
  return candidates;
}

}  // namespace

void validate(const Options& o) {
  make_operator_set(o.operators, 1);
  auto finite_non_negative = [](const char* name, double v) {
    if (!(v >= 0) || !std::isfinite(v))
      throw Error(std::string("sr option '") + name + "' must be finite and not negative (got " +
                  std::to_string(v) + ")");
  };
  auto positive = [](const char* name, double v) {
    if (!(v > 0))
      throw Error(std::string("sr option '") + name + "' must be positive (got " + std::to_string(v) + ")");
  };
  if (o.operators.empty()) throw Error("sr option 'operators' is empty");
  positive("max_size", o.max_size);
  positive("max_depth", o.max_depth);
  positive("populations", o.populations);
  positive("iterations", o.iterations);
  require_thread_count("sr option 'threads'", o.threads, 1);
  if (o.target_patience < 0) throw Error("sr option 'target_patience' must not be negative");
  positive("restarts", o.restarts);
  positive("tournament_size", o.tournament_size);
  if (o.population_size < 2) throw Error("sr option 'population_size' must be at least 2");
  finite_non_negative("time_limit_seconds", o.time_limit_seconds);
  if (std::isnan(o.target_loss)) throw Error("sr option 'target_loss' is NaN");
  if (o.constant_restarts < 0 || o.optimizer_iterations < 0) {
    throw Error("sr options 'constant_restarts' and 'optimizer_iterations' must not be negative");
  }
  if (!(o.migration_fraction >= 0 && o.migration_fraction <= 1))
    throw Error("sr option 'migration_fraction' must be in [0, 1]");
  finite_non_negative("parsimony", o.parsimony);
  if (!(o.holdout_fraction >= 0 && o.holdout_fraction < 1))
    throw Error("sr option 'holdout_fraction' must be in [0, 1)");
  if (o.holdout_min_rows < 0) throw Error("sr option 'holdout_min_rows' must not be negative");
  if (o.holdout_patience < 0) throw Error("sr option 'holdout_patience' must not be negative");
  if (!(o.structured_below >= 0 && o.structured_below <= 1))
    throw Error("sr option 'structured_below' must be in [0, 1]");
}

Result search(const Eigen::MatrixXd& X_data, const Eigen::VectorXd& y_data,
              const std::vector<std::string>& names, const Options& requested,
              const Eigen::VectorXd* weights) {
  validate(requested);
  check_data(X_data, y_data, names, weights);
  Options options = requested;
  options.loss = resolve_loss(requested.loss, y_data);
  check_targets(y_data.array(), options.loss);
  // The search works near 1 whatever the data's units; the laws are mapped back before the front is made.
  const Scaling scaling = Scaling::choose(X_data, y_data, options.loss);
  const Eigen::MatrixXd X = scaling.scale_x(X_data);
  const Eigen::VectorXd y = scaling.scale_y(y_data);

  // The search fits and ranks on `fitted` rows only; the held-out rows choose the best (make_front).
  const std::vector<Eigen::Index> held = held_out_rows(X.rows(), options);
  const std::vector<Eigen::Index> fitted = complement(X.rows(), held);
  const Eigen::MatrixXd X_fit = X(fitted, Eigen::all);
  const Eigen::VectorXd y_fit = y(fitted);
  Eigen::VectorXd w_fit;
  if (weights) w_fit = (*weights)(fitted);
  const Eigen::VectorXd* weights_fit = weights ? &w_fit : nullptr;

  Problem problem{X_fit, y_fit.array(), std::nullopt, options,
                  make_operator_set(options.operators, static_cast<int>(X.cols()))};
  if (weights) problem.weights = w_fit.array();
  {
    Expr c = Expr::constant(1.0);
    double reference = fit_constants(c, X_fit, y_fit, options.loss, weights_fit, 1, 50, options.seed);
    problem.reference_loss = std::isfinite(reference) && reference > 0 ? reference : 1.0;
    problem.loss_floor = std::max(loss_floor(options.loss, problem.reference_loss), 1e-300);
  }

  std::optional<HeldOut> held_out;
  if (!held.empty()) {
    held_out.emplace();
    held_out->X = X(held, Eigen::all);
    held_out->y = y(held).array();
    if (weights) held_out->weights = (*weights)(held).array();
  }

  const auto start = Clock::now();
  const bool has_deadline = options.time_limit_seconds > 0;
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.time_limit_seconds));
  HallOfFame overall(options.max_size);
  Result result;
  std::int64_t evaluations = 0;
  std::optional<Progress> progress;
  if (options.progress)
    progress.emplace("sr", static_cast<std::int64_t>(options.iterations) * options.restarts, "it");

  // An exact fit stops the search (after target_patience iterations without a simpler exact form).
  const double stop_loss = std::max(options.target_loss, problem.loss_floor);
  std::optional<HeldOutStanding> at_plateau;  // the merged front's standing after a restart's plateau
  int restarts = options.restarts;
  for (int restart = 0; restart < restarts; ++restart) {
    result.stop_reason =
        run_restart(problem, restart, stop_loss, deadline, has_deadline, held_out ? &*held_out : nullptr,
                    overall, result, evaluations, progress ? &*progress : nullptr);
    ++result.restarts_run;
    if (result.stop_reason == "exact fit") break;
    if (has_deadline && Clock::now() > deadline) {
      result.stop_reason = "time limit";
      break;
    }
    if (result.stop_reason != "held-out plateau") continue;
    const std::vector<Member> merged = overall.pareto();
    const HeldOutStanding now = held_out_standing(merged, *held_out, options.loss);
    const bool gained = !at_plateau || lower_row_by_row(now.best_rows, at_plateau->best_rows) ||
                        now.selected_complexity < at_plateau->selected_complexity;
    // A plateau whose best entry leaves a residual with structure is a law not found, not the noise's floor
    // (on noiseless data most misses stopped here with half their time unused): under a time limit, fresh
    // restarts go on until it. Without one, the confirming restarts stay bounded.
    const bool structured = has_deadline && now.best >= 0 && leaves_structure(merged[now.best].expr, problem);
    if (!gained && !structured) break;  // two restarts at the same floor: the noise's
    if (gained) at_plateau = now;
    if (restart + 1 == restarts && (structured || restarts < options.restarts + kPlateauConfirmingRestarts))
      ++restarts;
  }
  if (progress) progress->finish();
  refine_on_fitted_rows(overall, problem, evaluations);

  Eigen::ArrayXd w;
  if (weights) w = w_fit.array();
  std::vector<FrontEntry> candidates = front_candidates(overall, problem, X_fit, weights ? &w : nullptr);
  if (held_out) {
    for (auto& entry : candidates)
      set_holdout_loss(entry, held_out->X, held_out->y, options.loss, held_out->weights_or_null());
  }
  for (auto& entry : candidates) {
    entry.expr = scaling.to_data_units(entry.expr, X_fit);
    entry.complexity = entry.expr.complexity();  // the law as printed: mapping back may add nodes
  }
  Result front = make_front(std::move(candidates), names, problem.loss_floor);
  front.holdout_rows = static_cast<int>(held.size());
  if (front.most_accurate >= 0) {
    const auto notice =
        power_law_notice(X_fit, problem.y, names, problem.operators, options.loss, weights ? &w : nullptr,
                         front.front[front.most_accurate].loss, problem.loss_floor, scaling);
    if (notice) front.notices.push_back(*notice);
  }
  if (scaling.any()) front.notices.push_back(scaling.notice(names));
  front.loss = options.loss;
  front.loss_auto = requested.loss == LossKind::kAuto;
  front.iterations_run = result.iterations_run;
  front.restarts_run = result.restarts_run;
  front.stop_reason = result.stop_reason;
  front.evaluations = evaluations;
  front.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return front;
}

}  // namespace orbitlaw::sr
