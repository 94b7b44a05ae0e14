"""Intervals over training seeds, the one place the project computes them for its answers, and the one place
that decides, by the quantity's possible range, which method an interval uses (docs/experiments.md, "Intervals
over seeds"):

- a quantity with no bound (an exponent, a transplant slope, a validation loss in nats, a paired difference of
  errors): Student's t interval of the mean, and Welch's t interval of the difference of two means;
- a quantity with a bound (a count of galaxies out of n, a pass (1) or fail (0), R² <= 1, an error or a ratio
  of errors >= 0): the seed-level bootstrap of the mean, which cannot leave the range, since every resample's
  mean is a mean of the seeds' own values. A difference of two such quantities uses the bootstrap when the
  range of the difference is finite on both sides (counts, passes), Welch otherwise (R², ratios: unbounded
  differences).

mean_ci() and difference_ci() make that choice from a range; welch() and mean_interval() are the t intervals
themselves. The results pages (experiments/lib/results_page.py), the behaviour tables
(experiments/lib/behaviour_table.py) and the report's answer (experiments/lib/answer.py) all call these, so a
difference a results page calls established is the one the report calls so.

The bootstrap: percentile interval of the resampled means (seeds drawn with replacement, each sample within
itself), at the level of the expanded percentile interval (Hesterberg 2015, "What teachers should know about
the bootstrap", The American Statistician 69(4)): a tail of Phi(-sqrt(n/(n-1)) t_{0.975, n-1}) instead of
0.025, which widens the percentile interval for few seeds (at 3 seeds each tail is 6.8e-8, so the interval is
the whole span of the resampled means: the seeds' [min, max], and for a difference [min a - max b, max a - min
b]). The quantile is the inverted CDF (the
smallest resampled value whose cumulative probability reaches the level; numpy's method="inverted_cdf"). The
resamples are enumerated exactly, every one of the n^n index tuples counted through its multiset and
multinomial weight, while the multisets number at most EXACT_LIMIT (a mean up to 9 seeds, a difference up to
5 seeds against 5); beyond that, MONTE_CARLO resamples drawn with random.Random(BOOTSTRAP_SEED). Either way the
interval is the same on every run.

Standard library only: the report must run where numpy/scipy are absent (the bare GPU machine).
"""
import collections
import itertools
import math
import random
import statistics
from typing import NamedTuple

UNBOUNDED = (None, None)
NONNEGATIVE = (0.0, None)  # errors and ratios of errors
R2 = (None, 1.0)
PASS = (0, 1)  # one seed passes (1) or fails (0) a test

EXACT_LIMIT = 50_000
MONTE_CARLO = 20_000
BOOTSTRAP_SEED = 41


def _betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta function (Numerical Recipes, betacf)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def t_cdf(t, df):
    """P(T <= t) for Student's t with df (not necessarily integer) degrees of freedom."""
    x = df / (df + t * t)
    a, b = df / 2.0, 0.5
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    tail = front * _betacf(a, b, x) / a if x < (a + 1) / (a + b + 2) else 1.0 - front * _betacf(b, a, 1 - x) / b
    return 1.0 - 0.5 * tail if t > 0 else 0.5 * tail


def t_quantile(p, df):
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def welch(a, b):
    """(mean(a) - mean(b), 95% interval low, high) with Welch's degrees of freedom; None below 2 values each."""
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return ma - mb, ma - mb, ma - mb
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    h = t_quantile(0.975, df) * se
    return ma - mb, ma - mb - h, ma - mb + h


def mean_interval(values):
    """(mean, 95% interval low, high) of one sample's mean with Student's t at n - 1 degrees of freedom; None
    below 2 values. Used for per-seed differences of paired quantities (a model and its baseline evaluated on
    the same data), where Welch's two-sample interval would ignore the pairing."""
    if len(values) < 2:
        return None
    n = len(values)
    m = sum(values) / n
    se = math.sqrt(sum((x - m) ** 2 for x in values) / (n - 1) / n)
    h = t_quantile(0.975, n - 1) * se
    return m, m - h, m + h


def out_of(n):
    """The range of a count out of n (galaxies recovering a law, seeds passing)."""
    return (0, n)


def bounded(bounds):
    return bounds[0] is not None or bounds[1] is not None


class Interval(NamedTuple):
    """An estimate (a mean or a difference of means), its 95% interval, and the method: "t", "Welch" or
    "bootstrap"."""
    estimate: float
    low: float
    high: float
    method: str


def _resample_means(values):
    """[(mean, weight)] over every resample of values with replacement: each multiset of indices once, weighted
    by how many of the n^n ordered resamples give it."""
    n = len(values)
    found = []
    for combo in itertools.combinations_with_replacement(range(n), n):
        weight = math.factorial(n)
        for c in collections.Counter(combo).values():
            weight //= math.factorial(c)
        found.append((sum(values[i] for i in combo) / n, weight))
    return found


def _multisets(n):
    return math.comb(2 * n - 1, n)


def _inverted_cdf(pairs, levels):
    """The smallest value whose cumulative weight reaches each level (a fraction of the total weight)."""
    pairs = sorted(pairs)
    total = sum(w for _, w in pairs)
    out = []
    for level in levels:
        target, cumulative = level * total, 0
        for value, weight in pairs:
            cumulative += weight
            if cumulative >= target:
                out.append(value)
                break
        else:
            out.append(pairs[-1][0])
    return out


def bootstrap_tail(n):
    """Each tail's probability of the expanded percentile interval at n seeds (Hesterberg 2015): the normal tail
    at sqrt(n / (n - 1)) times Student's t 0.975 quantile with n - 1 degrees of freedom."""
    return statistics.NormalDist().cdf(-math.sqrt(n / (n - 1)) * t_quantile(0.975, n - 1))


def _bootstrap(samples, combine):
    """(low, high): the expanded percentile interval of combine(resampled means), one mean per sample."""
    tail = bootstrap_tail(min(len(s) for s in samples))
    if math.prod(_multisets(len(s)) for s in samples) <= EXACT_LIMIT:
        pairs = [(combine(*(m for m, _ in parts)), math.prod(w for _, w in parts))
                 for parts in itertools.product(*(_resample_means(s) for s in samples))]
    else:
        rng = random.Random(BOOTSTRAP_SEED)
        pairs = [(combine(*(sum(rng.choices(s, k=len(s))) / len(s) for s in samples)), 1)
                 for _ in range(MONTE_CARLO)]
    return tuple(_inverted_cdf(pairs, (tail, 1 - tail)))


def bootstrap_mean(values):
    """(mean, low, high): the seed bootstrap's 95% interval of the mean; None below 2 values."""
    if len(values) < 2:
        return None
    return (statistics.fmean(values),) + _bootstrap([list(values)], lambda m: m)


def bootstrap_difference(a, b):
    """(mean(a) - mean(b), low, high): the bootstrap's 95% interval of the difference of means, each sample
    resampled within itself; None below 2 values each."""
    if len(a) < 2 or len(b) < 2:
        return None
    return (statistics.fmean(a) - statistics.fmean(b),) + _bootstrap([list(a), list(b)], lambda x, y: x - y)


def mean_ci(values, bounds=UNBOUNDED):
    """The 95% interval of the mean of values over seeds, by the quantity's range (low, high; None: no bound on
    that side): the bootstrap for a bounded quantity, Student's t otherwise. None below 2 values."""
    values = list(values)
    i = bootstrap_mean(values) if bounded(bounds) else mean_interval(values)
    return None if i is None else Interval(*i, "bootstrap" if bounded(bounds) else "t")


def difference_ci(a, b, bounds=UNBOUNDED):
    """The 95% interval of mean(a) - mean(b), both quantities of the range bounds: the bootstrap where the
    difference's range is finite on both sides (both ends of bounds are), Welch's t otherwise. None below 2
    values each."""
    both = bounds[0] is not None and bounds[1] is not None
    i = bootstrap_difference(list(a), list(b)) if both else welch(list(a), list(b))
    return None if i is None else Interval(*i, "bootstrap" if both else "Welch")


def excludes_zero(interval):
    """Whether a (difference, low, high) interval lies wholly on one side of 0: the only case the answer
    calls a difference."""
    return interval is not None and (interval[1] > 0 or interval[2] < 0)
