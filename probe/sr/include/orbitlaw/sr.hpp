#pragma once
// Public interface of orbitlaw_sr, the symbolic-regression engine: expression trees over named variables and
// fitted constants, an evolutionary search (parallel populations with migration, Levenberg-Marquardt constant
// fitting) that returns a Pareto front of formulas, a parser for formulas written like its text output, and
// SRBench's equivalence rule ("equal to a target law up to a constant factor or offset").
//
// Conventions: X holds one sample per row and one variable per column; `names` names the columns. Complexity
// is the number of nodes in the tree (PySR's default), so 39.478*m1*m2/r^2 in the tree mul(mul(mul(c,m1),m2),
// inv(square(r))) and in div(mul(mul(c,m1),m2),square(r)) both count the nodes actually present.
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "orbitlaw/common/config.hpp"  // Json
#include "orbitlaw/common/config_schema.hpp"

namespace orbitlaw::sr {

// ---------------------------------------------------------------------------------------------------------------
// Losses. All are means over rows (weighted means when weights are given).
//   kL2            (pred - y)^2
//   kL1            |pred - y|
//   kRelative      ((pred - y) / y)^2              (y must be non-zero)
//   kLog           (ln pred - ln y)^2              (y must be > 0; pred <= 0 makes the loss infinite)
//   kThresholdedL1 max(1e-8, |pred - y|) - 1e-8    (Vafa et al.'s loss)
//   kAuto          chosen from the targets by choose_loss() before the search starts
enum class LossKind { kL2, kL1, kRelative, kLog, kThresholdedL1, kAuto };
// "l2", "l1", "relative", "log", "thresholded_l1", "auto"; throws orbitlaw::Error naming the bad value.
LossKind parse_loss_kind(const std::string& name);
std::string to_string(LossKind kind);
// The loss kAuto stands for: kLog when every target is positive and they span more than two decades
// (max / min > 100), where a squared error would be decided by the largest rows alone; kL2 otherwise.
LossKind choose_loss(const Eigen::VectorXd& y);
// `kind`, or choose_loss(y) for kAuto.
LossKind resolve_loss(LossKind kind, const Eigen::VectorXd& y);

// ---------------------------------------------------------------------------------------------------------------
// Expressions.
enum class Op : std::uint8_t {
  kConst,
  kVar,  // leaves
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,  // binary
  kNeg,
  kInv,
  kAbs,
  kSquare,
  kCube,
  kSqrt,
  kExp,
  kLog,
  kSin,
  kCos  // unary
};
int arity(Op op);
// Operator names as used in Options::operators and in text: + - * / pow neg inv abs square cube sqrt exp log
// sin cos
// ("^" is accepted as a synonym of pow).
std::string op_name(Op op);
std::vector<std::string> all_operator_names();

struct Node {
  Op op = Op::kConst;
  int var = 0;       // column index for kVar
  double value = 0;  // constant for kConst
};

// A tree stored in prefix order (an operator precedes its operands; a subtree is a contiguous range).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::vector<Node> prefix) : nodes_(std::move(prefix)) {}
  static Expr constant(double value) { return Expr({Node{Op::kConst, 0, value}}); }
  static Expr variable(int column) { return Expr({Node{Op::kVar, column, 0}}); }
  // `op` applied to `a` and `b` (a binary operator: its node, then a's, then b's).
  static Expr binary(Op op, const Expr& a, const Expr& b);

  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& nodes() { return nodes_; }
  bool empty() const { return nodes_.empty(); }
  int complexity() const { return static_cast<int>(nodes_.size()); }
  int depth() const;
  int constant_count() const;
  // Index one past the end of the subtree starting at `start`.
  int subtree_end(int start) const;

  // Values on every row of X. Domain errors (log of a negative, 1/0, ...) give NaN or inf in those rows.
  Eigen::ArrayXd evaluate(const Eigen::MatrixXd& X) const;
  // Human-readable infix text, parseable by parse(): "39.478*m1*m2/r^2", "cos(cos(2.19*m1))".
  std::string text(const std::vector<std::string>& names, int significant_digits = 6) const;
  std::string latex(const std::vector<std::string>& names, int significant_digits = 6) const;
  // {"op": "mul", "args": [...]}, {"var": "m1"}, {"const": 39.478}.
  Json json(const std::vector<std::string>& names) const;

 private:
  std::vector<Node> nodes_;
};

// Parses infix text: numbers (1.5, 2e-3), variables from `names`, + - * / ^, unary minus, parentheses, and
// the functions pow(a,b) neg inv abs square cube sqrt exp log sin cos, plus the constant pi. Throws
// orbitlaw::Error with the position of the problem.
Expr parse(const std::string& text, const std::vector<std::string>& names);
// Throws orbitlaw::Error naming the first of `names` that parse() could not read back as a variable (it must
// be a letter or _ followed by letters, digits or _, ASCII): a law printed with `r-1` in it would read as
// r minus 1.
void check_variable_names(const std::vector<std::string>& names);

// Canonical simplification: folds constants, removes neutral elements (x+0, x*1, x^1), merges constant
// factors and constant terms of products and sums, turns x*x into square(x) and x/(y) into x*inv(y) forms
// consistently, and orders commutative operands canonically. The result evaluates to the same values (up to
// rounding).
Expr simplify(const Expr& expr);
// Rounds every constant to `significant_digits` significant digits (SRBench's rule uses 3).
Expr round_constants(const Expr& expr, int significant_digits = 3);

// Loss of an expression on data (weights optional; non-finite predictions give +inf; kAuto: choose_loss(y)).
double loss(const Expr& expr, const Eigen::MatrixXd& X, const Eigen::VectorXd& y, LossKind kind,
            const Eigen::VectorXd* weights = nullptr);

// Fits the constants of `expr` in place by Levenberg-Marquardt (analytic Jacobian; for L1-type losses
// iteratively reweighted least squares), with `restarts` extra starts from perturbed constants; keeps the
// constants only when the loss improves (kAuto is resolved from y). Returns the loss after fitting.
double fit_constants(Expr& expr, const Eigen::MatrixXd& X, const Eigen::VectorXd& y, LossKind kind,
                     const Eigen::VectorXd* weights = nullptr, int restarts = 2, int iterations = 30,
                     std::uint64_t seed = 0);

// Bootstrap of a fitted expression: `resamples` times the rows are drawn with replacement (a stream of
// `seed`) and the constants refitted by Levenberg-Marquardt from the fitted values (loss `kind`; kAuto is
// resolved from y). Refits whose loss is not finite are dropped and counted. The intervals are the central
// `confidence` share of the refits (percentiles, linear interpolation); constants in prefix order, as
// Expr::nodes() holds them. An expression without constants gives no refits: its form fixes everything.
struct ConstantInterval {
  double value = 0;  // as fitted on every row
  double low = NAN, high = NAN;
};
struct Bootstrap {
  std::vector<ConstantInterval> constants;
  std::vector<Expr> refits;  // the expression with each resample's constants
  int resamples = 0;
  int failed = 0;  // refits dropped for a non-finite loss
  double confidence = 0.95;
};
Bootstrap bootstrap_constants(const Expr& expr, const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                              LossKind kind, int resamples = 100, double confidence = 0.95,
                              std::uint64_t seed = 0);
// The central `confidence` interval of `values` (percentiles with linear interpolation); NaNs when empty.
std::pair<double, double> percentile_interval(std::vector<double> values, double confidence);

// ---------------------------------------------------------------------------------------------------------------
// Search.
// Fewest data rows search() accepts: a formula with a few constants fits fewer points exactly.
inline constexpr int kMinimumRows = 8;

struct Options {
  // pow covers power laws with any real exponent (r^2.5) and sqrt the half powers at one node less; e.g.
  // Vafa et al.: {"+","*","sin","cos","exp","inv"}
  std::vector<std::string> operators = {"+", "-", "*", "/", "pow", "sqrt"};
  int max_size = 20;    // most nodes in an expression
  int max_depth = 10;   // deepest path, leaves included
  int populations = 8;  // evolved independently between migrations
  int population_size = 40;
  int iterations = 200;           // one iteration = population_size mutations in every population
  double time_limit_seconds = 0;  // 0: no limit. A time limit makes results depend on machine speed.
  // Stop once some expression has loss <= max(target_loss, the rounding floor loss_floor()) and the simplest
  // such expression has not become simpler for target_patience iterations (so a simpler exact form can still
  // be found). Negative: the floor alone, so a search stops soon after an exact fit.
  double target_loss = -1;
  int target_patience = 5;
  int threads = 1;  // results depend only on seed, not on threads (populations own their RNGs)
  std::uint64_t seed = 0;
  LossKind loss = LossKind::kAuto;  // kAuto: chosen from y (choose_loss); Result::loss says which
  int restarts = 1;                 // independent searches (seeds seed, seed+1, ...) whose fronts are merged
  int constant_restarts = 2;        // extra Levenberg-Marquardt starts from perturbed constants
  int optimizer_iterations = 30;    // LM iterations per start
  int batch_size = 0;  // > 0 and < rows: constants are fitted on a random subset of this many rows
  int tournament_size = 8;
  double parsimony = 0.002;  // selection pressure per node, on losses normalised by the constant model's
  double migration_fraction = 0.1;  // share of each population replaced by hall-of-fame members per iteration
  // Rows held out from the fit, on which Result::best is chosen: this share of the rows, drawn from `seed`,
  // when there are at least holdout_min_rows rows (fewer: none, and best is PySR's rule). 0: never. The
  // minimum keeps at least 50 rows for the held-out losses' standard errors at the default share, and leaves
  // small tables searched on every row as before.
  double holdout_fraction = 0.2;
  int holdout_min_rows = 250;
  // With held-out rows, a restart stops at a plateau: when neither the front's lowest held-out loss has
  // fallen row by row (paired differences above twice their standard error) nor the entry the selection would
  // choose has become simpler, for holdout_patience iterations and for as many as the restart took to reach
  // its last such gain. The search stops at the noise floor when a further restart (run beyond `restarts` if
  // need be, at most 3 more) reaches its plateau without such a gain on the merged front: what the search
  // still finds only fits the noise of the fitted rows. Under a time limit, a plateau whose best entry leaves
  // a residual that is a smooth function of the inputs (nearest rows have close residuals; noise has not) is
  // a law not found rather than the noise, and fresh restarts go on until the limit (structured_below). 0:
  // never stop on held-out losses.
  int holdout_patience = 30;
  // The residual of the plateau's best entry on the fitted rows has structure when half the mean squared
  // difference between each row's residual and its nearest row's (inputs on a unit range) is below this
  // share of the residual's variance: about 1 for noise, near 0 for a smooth function of the inputs. Several
  // standard errors below 1 at a few hundred rows. 0: every plateau is the noise floor.
  double structured_below = 0.5;
  bool progress = false;  // print a progress line (orbitlaw::Progress) on stderr
};

// Checks operator names, sizes and counts; throws orbitlaw::Error naming the bad setting.
void validate(const Options& options);

// Reads the options' config keys on top of `o`, with the names of the fields above (operators as a list or a
// comma-separated string; loss by name): one vocabulary for `orbitlaw sr` and the probe's law searches. Not
// seed or progress, which callers own; validate() checks the values.
void read_options(ConfigReader& reader, Options& o);
// Those keys with their types, defaults, ranges and descriptions (read_options reads through it).
const ConfigSchema<Options>& options_schema();
// "a,b,c" or a JSON array of strings; throws Error naming `key` otherwise.
std::vector<std::string> name_list(const Json& value, const std::string& key);

struct FrontEntry {
  int complexity = 0;
  double loss = 0;  // on the rows fitted: every row but the held-out ones
  // On the held-out rows, and its standard error (standard deviation of the per-row losses / sqrt(rows));
  // NaN when no rows were held out, +inf where the expression is not finite on some held-out row.
  double holdout_loss = NAN;
  double holdout_loss_se = NAN;
  double score = 0;  // -d ln(loss) / d complexity against the previous front entry (0 for the first)
  std::string text;  // canonical (simplified) form
  std::string latex;
  Json json;
  Expr expr;
};

struct Result {
  std::vector<FrontEntry> front;  // increasing complexity, strictly decreasing loss
  // With held-out losses: the simplest entry whose held-out loss is within one standard error of the lowest
  // (the one-standard-error rule), so terms that only fit the noise of the fitted rows are not chosen.
  // Without: PySR's rule, the highest score among entries with loss <= 1.5 x the minimum loss.
  int best = -1;
  std::string selection = "score";  // how best was chosen: "holdout" or "score" (PySR's rule)
  int holdout_rows = 0;             // rows held out from the fit
  int highest_score = -1;           // highest score over the whole front
  int most_accurate = -1;           // lowest loss
  LossKind loss = LossKind::kL2;    // the loss the search minimised (never kAuto)
  bool loss_auto = false;           // whether it was chosen from the data (Options::loss was kAuto)
  // One-line remarks on the data against the options, e.g. that every input and the target are positive,
  // a power law fitted in logarithms beats every expression found, and its exponents need an operator that
  // is off.
  std::vector<std::string> notices;
  int iterations_run = 0;  // over all restarts
  // Restarts run: Options::restarts, fewer after an exact fit, the time limit or a confirmed noise floor, and
  // up to 3 more when the last one ended on a held-out plateau that no later restart has confirmed.
  int restarts_run = 0;
  // Why the search ended: "iterations" (the budget ran out), "time limit", "exact fit" (at the rounding floor
  // for target_patience iterations) or "held-out plateau" (Options::holdout_patience).
  std::string stop_reason = "iterations";
  double seconds = 0;
  std::int64_t evaluations = 0;  // expression evaluations on the data (LM steps included)
};

// Runs the search. Throws orbitlaw::Error on bad options or data (non-finite values, size mismatch, no rows,
// y incompatible with the loss such as y <= 0 for kLog, a name parse() could not read back).
// Any finite magnitude is searched like order 1: a target or input whose root mean square is beyond 2^±20
// (about 1e±6), and the target of the thresholded L1 loss always, is divided by a power of two near it first
// (exact). The front's laws are in the data's units; its losses are in the scaled units, as a notice says
// (thresholded L1's 1e-8 is thus relative to the target's size: absolute, it made every expression within
// 1e-8 of forces of order 1e-5 score 0).
Result search(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const std::vector<std::string>& names,
              const Options& options, const Eigen::VectorXd* weights = nullptr);

// Builds a front from arbitrary (complexity, loss) candidates: keeps the best loss per complexity, drops
// entries not strictly better than every simpler one, computes scores and the three selections (best by
// held-out loss when some front entry has a finite one, else by PySR's rule). Entries whose text/latex/json
// are empty are filled from expr when it is not empty. Losses below `loss_floor`, held-out ones included,
// count as equal to it for dominance, scores and selections (reported losses are untouched): without a floor,
// rounding noise (1e-31 against 1e-32 on noiseless data) would decide between exact expressions. search()
// uses loss_floor(kind, loss of the best constant model).
Result make_front(std::vector<FrontEntry> candidates, const std::vector<std::string>& names,
                  double loss_floor = 0);
// Rounding level of a loss relative to the constant model's loss `reference`: 1e-24 x reference for the
// squared losses (L2, relative, log), 1e-12 x reference for the L1 losses.
double loss_floor(LossKind kind, double reference);

// Front as JSON ({"front": [...], "best": i, "selection": "holdout", "holdout_rows": n, "loss": "log",
// "loss_chosen_by": "auto" | "options", "notices": [...], ...}; held-out losses that are not finite are null)
// and CSV (complexity,loss,holdout_loss,score,selection,expression; empty where not finite).
Json result_json(const Result& result);
std::string result_csv(const Result& result);

// ---------------------------------------------------------------------------------------------------------------
// Equivalence (SRBench's rule). Both sides are simplified; then the found expression's constants with
// magnitude below rule.zero_below become 0 (SRBench uses 1e-4; off by default because forces in AU/yr/Msun
// can be 1e-10), the rest are rounded to rule.significant_digits significant digits, and it is simplified
// again (so that a product of constants is rounded once, as a whole). Then, in this order:
//   1. symbolic: if simplify(found / target) or simplify(found - target) is a constant, decided (method
//      "symbolic"); the simplifier assumes positive variables (see simplify());
//   2. numeric: found/target and found-target are evaluated on the rows of `points`; the relation holds when
//      its values agree to a relative spread of rule.tolerance (method "numeric"). Rows where either side is
//      not finite, or where the target is 0 for the ratio, are skipped; fewer than 2 usable rows: not
//      equivalent.
// A zero ratio constant (found = 0) is not an equivalence.
struct Equivalence {
  bool equivalent = false;
  std::string relation = "none";  // "ratio" | "difference" | "none"
  double constant = 0;            // found / target or found - target
  std::string method = "none";    // "symbolic" | "numeric" | "none"
};
struct EquivalenceRule {
  int significant_digits = 3;
  double zero_below = 0;
  double tolerance = 1e-8;
};
Equivalence check_equivalence(const std::string& found, const std::string& target,
                              const std::vector<std::string>& names, const Eigen::MatrixXd& points,
                              const EquivalenceRule& rule = {});
Equivalence check_equivalence(const Expr& found, const Expr& target, const Eigen::MatrixXd& points,
                              const EquivalenceRule& rule = {});

// ---------------------------------------------------------------------------------------------------------------
// Data tables for the CLI and the probe: columns by name from a CSV file with a header row, or from an HDF5
// file holding 1-D datasets named by the columns. Throws orbitlaw::Error on a missing file, an unknown
// column, columns of different lengths, no rows, or non-finite values (naming the column and row).
struct Table {
  std::vector<std::string> names;
  Eigen::MatrixXd columns;  // rows x names.size()
};
Table read_table(const std::string& path, const std::vector<std::string>& columns);

}  // namespace orbitlaw::sr
