"""Intervals over training seeds, the one place the project computes them for its answers: Student's t
quantile (from the regularized incomplete beta function, so any degrees of freedom, not only a table's),
Welch's 95% interval of the difference of two means, and the t interval of one mean.

The results pages (experiments/lib/results_page.py) and the report's answer (experiments/lib/answer.py) both
import these, so that a difference a results page calls established is the one the report calls so.
Standard library only: the report must run where numpy/scipy are absent (the bare GPU machine).
"""
import math


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


def excludes_zero(interval):
    """Whether a (difference, low, high) interval lies wholly on one side of 0: the only case the answer
    calls a difference."""
    return interval is not None and (interval[1] > 0 or interval[2] < 0)
