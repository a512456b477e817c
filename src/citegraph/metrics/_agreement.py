"""Agreement and correlation: Cohen's kappa, Pearson r, Spearman rho, Somers' D (pure Python).

Formulas (``n`` paired observations):

- **Cohen's kappa** of two raters' labels: ``κ = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of
  items both raters label alike and ``p_e = Σ_k (a_k / n)(b_k / n)`` the agreement expected by
  chance from each rater's label frequencies ``a_k``, ``b_k``. Undefined when ``p_e = 1`` (both
  raters use one and the same label throughout).
- **Pearson r** ``= S_xy / sqrt(S_xx S_yy)`` with ``S_xy = Σ (x_i - x̄)(y_i - ȳ)``. Undefined when
  either variable is constant. Two-sided p-value of ``H0: ρ = 0`` from Student's t with
  ``n - 2`` degrees of freedom, ``t = r sqrt((n - 2) / (1 - r²))``:
  ``p = P(|T| >= |t|) = I_{df / (df + t²)}(df / 2, 1 / 2)``, where ``I_x(a, b)`` is the
  regularised incomplete beta function (computed here by its continued fraction, as in
  *Numerical Recipes* §6.4). ``|r| = 1`` gives ``p = 0``; ``n < 3`` has no p-value.
- **Spearman rho**: Pearson r of the ranks, tied values getting the mean of the ranks they span;
  the p-value uses the same t approximation (as SciPy's ``spearmanr`` does).
- **Somers' D** ``D(Y|X) = (C - D) / (n(n - 1)/2 - T_x)``: ``C`` and ``D`` count the concordant and
  discordant pairs, ``T_x`` the pairs tied on ``x`` (whatever ``y`` does). ``x`` is the independent
  variable: pairs tied on ``x`` are left out, pairs tied only on ``y`` count in the denominator.
  Same convention as SciPy's ``somersd(x, y)``. Undefined when every pair is tied on ``x``.
- **Kendall's tau-b** ``= (C - D) / sqrt((n0 - n1)(n0 - n2))`` with ``n0 = n(n - 1)/2`` and
  ``n1``, ``n2`` the pairs tied on ``x``, on ``y``. Undefined when either variable is constant.
  Two-sided p-value from SciPy's tie-corrected normal approximation of ``C - D``.

A statistic that cannot be computed is ``None`` with a reason, never NaN.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError

Statistic = Literal["cohen_kappa", "pearson", "spearman", "somers_d", "kendall_tau_b"]


class Agreement(BaseModel):
    """One agreement or correlation statistic over paired observations."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    statistic: Statistic
    value: float | None = Field(description="The statistic; None when undefined (see reason).")
    n: int = Field(description="Paired observations used.")
    p_value: float | None = Field(
        default=None, description="Two-sided p-value of 'no association', when computed."
    )
    reason: str | None = Field(default=None, description="Why value or p_value is None.")


def _check_pairs(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ConfigError(f"paired observations needed, got {len(a)} and {len(b)} values")


def _check_paired_numbers(x: Sequence[float], y: Sequence[float]) -> None:
    """Raise :class:`ConfigError` unless ``x`` and ``y`` are paired and every value is finite."""
    _check_pairs(x, y)
    for v in (*x, *y):
        if not math.isfinite(v):
            raise ConfigError(f"values must be finite numbers, got {v!r}")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Agreement:
    """Cohen's kappa between two raters' labels of the same items.

    Args:
        a: Rater A's label per item.
        b: Rater B's label per item.

    Returns:
        ``κ = (p_o - p_e) / (1 - p_e)``; ``None`` when there is no item or ``p_e = 1``.

    Raises:
        ConfigError: If the sequences differ in length.

    Example:
        >>> cohen_kappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]).value  # (0.75 - 0.5) / 0.5
        0.5
    """
    _check_pairs(a, b)
    n = len(a)
    if n == 0:
        return Agreement(statistic="cohen_kappa", value=None, n=0, reason="no items")
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[k] * count_b.get(k, 0) for k in count_a) / (n * n)
    if expected >= 1.0:
        return Agreement(
            statistic="cohen_kappa",
            value=None,
            n=n,
            reason="both raters use one and the same label for every item (chance agreement 1)",
        )
    return Agreement(statistic="cohen_kappa", value=(observed - expected) / (1.0 - expected), n=n)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """``I_x(a, b) = B(x; a, b) / B(a, b)`` for ``a, b > 0`` and ``0 <= x <= 1``.

    Raises:
        ConfigError: On parameters out of range.
    """
    if a <= 0 or b <= 0 or not 0.0 <= x <= 1.0:
        raise ConfigError(f"incomplete beta needs a, b > 0 and 0 <= x <= 1, got {a}, {b}, {x}")
    if x == 0.0 or x == 1.0:
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value ``P(|T| >= |t|)`` of Student's t with ``df`` degrees of freedom.

    Raises:
        ConfigError: If ``df <= 0``.
    """
    if df <= 0:
        raise ConfigError(f"degrees of freedom must be > 0, got {df}")
    if math.isinf(t):
        return 0.0
    return regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def _pearson(x: Sequence[float], y: Sequence[float], statistic: Statistic) -> Agreement:
    n = len(x)
    if n < 2:
        return Agreement(statistic=statistic, value=None, n=n, reason="needs at least 2 pairs")
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((v - mx) ** 2 for v in x)
    syy = sum((v - my) ** 2 for v in y)
    sxy = sum((u - mx) * (v - my) for u, v in zip(x, y, strict=True))
    if sxx == 0 or syy == 0:
        return Agreement(
            statistic=statistic, value=None, n=n, reason="a variable is constant: r undefined"
        )
    r = max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
    if n < 3:
        return Agreement(statistic=statistic, value=r, n=n, reason="p-value needs at least 3 pairs")
    df = n - 2
    p = 0.0 if abs(r) >= 1.0 else t_two_sided_p(r * math.sqrt(df / (1.0 - r * r)), df)
    return Agreement(statistic=statistic, value=r, n=n, p_value=p)


def pearson(x: Sequence[float], y: Sequence[float]) -> Agreement:
    """Pearson's r with its two-sided t-test p-value (see the module docstring).

    Raises:
        ConfigError: If the sequences differ in length or hold a non-finite value.
    """
    _check_paired_numbers(x, y)
    return _pearson(x, y, "pearson")


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks; tied values share the mean of the ranks they span.

    Example:
        >>> average_ranks([10, 20, 20, 5])
        [2.0, 3.5, 3.5, 1.0]
    """
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        mean_rank = (start + end) / 2.0 + 1.0
        for k in range(start, end + 1):
            ranks[order[k]] = mean_rank
        start = end + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> Agreement:
    """Spearman's rho (Pearson r of average ranks) with the t-approximation p-value.

    Raises:
        ConfigError: If the sequences differ in length or hold a non-finite value.
    """
    _check_paired_numbers(x, y)
    return _pearson(average_ranks(x), average_ranks(y), "spearman")


def somers_d(x: Sequence[float], y: Sequence[float]) -> Agreement:
    """Somers' ``D(Y|X)``: how well ``x`` (independent) orders ``y`` (dependent).

    ``(concordant - discordant) / (pairs not tied on x)``; O(n²) pairs, fine for thousands of
    observations.

    Args:
        x: The independent variable (e.g. a metric's scores).
        y: The dependent variable (e.g. human ratings).

    Returns:
        ``D(Y|X)``; ``None`` when fewer than 2 observations or every pair is tied on ``x``.
        ``p_value`` is the two-sided test of no association (:func:`somers_d_p_value`, the same
        for either direction).

    Raises:
        ConfigError: If the sequences differ in length or hold a non-finite value.
    """
    _check_paired_numbers(x, y)
    n = len(x)
    concordant = discordant = untied_x = 0
    for i in range(n):
        xi, yi = x[i], y[i]
        for j in range(i + 1, n):
            dx = x[j] - xi
            if dx == 0:
                continue
            untied_x += 1
            s = dx * (y[j] - yi)
            if s > 0:
                concordant += 1
            elif s < 0:
                discordant += 1
    if untied_x == 0:
        reason = "needs at least 2 observations" if n < 2 else "every pair is tied on x"
        return Agreement(statistic="somers_d", value=None, n=n, reason=reason)
    p, why = somers_d_p_value(x, y)
    value = (concordant - discordant) / untied_x
    return Agreement(statistic="somers_d", value=value, n=n, p_value=p, reason=why)


def somers_d_p_value(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, str | None]:
    """Two-sided p-value of "no association" for Somers' D (either direction), SciPy's test.

    Returns:
        ``(p, None)``, or ``(None, reason)`` with fewer than 2 observations or no variance.

    Example:
        >>> round(somers_d_p_value([0, 1, 2, 2], [0.1, 0.4, 0.3, 0.9])[0], 4)  # Z = 3 / sqrt(5)
        0.1797
    """
    _check_pairs(x, y)
    n = len(x)
    if n < 2:
        return None, "needs at least 2 pairs"
    c = [0] * n
    for i in range(n):
        for j in range(i + 1, n):
            s = (x[j] - x[i]) * (y[j] - y[i])
            sign = (s > 0) - (s < 0)
            c[i] += sign
            c[j] += sign
    total = sum(c)
    spread = sum(v * v for v in c) - total * total / n
    if spread <= 0.0:
        if total == 0:
            return None, "no untied pairs: the test statistic is undefined"
        return 0.0, None
    z = total / (2.0 * math.sqrt(spread))
    return math.erfc(abs(z) / math.sqrt(2.0)), None


class PairCounts(BaseModel):
    """How the ``n(n - 1)/2`` pairs of paired observations order: concordant, discordant, tied."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(description="Paired observations.")
    concordant: int
    discordant: int
    tied_x: int = Field(description="Pairs tied on x (whatever y does).")
    tied_y: int = Field(description="Pairs tied on y (whatever x does).")

    @property
    def pairs(self) -> int:
        """``n(n - 1)/2``."""
        return self.n * (self.n - 1) // 2


def _tied_pairs(counts: Counter[float]) -> int:
    return sum(k * (k - 1) // 2 for k in counts.values())


def pair_counts(x: Sequence[float], y: Sequence[float]) -> PairCounts:
    """Concordant, discordant and tied pairs, from the table of distinct ``(x, y)`` values
    (O(k²) for k distinct pairs: fast for ratings on a small scale, fit for bootstraps).

    Raises:
        ConfigError: If the sequences differ in length or hold a non-finite value.
    """
    _check_paired_numbers(x, y)
    cells = sorted(Counter(zip(x, y, strict=True)).items())
    concordant = discordant = 0
    for i, ((xi, yi), ni) in enumerate(cells):
        for (xj, yj), nj in cells[i + 1 :]:
            s = (xj - xi) * (yj - yi)
            if s > 0:
                concordant += ni * nj
            elif s < 0:
                discordant += ni * nj
    return PairCounts(
        n=len(x),
        concordant=concordant,
        discordant=discordant,
        tied_x=_tied_pairs(Counter(x)),
        tied_y=_tied_pairs(Counter(y)),
    )


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> Agreement:
    """Kendall's tau-b with SciPy's asymptotic two-sided p-value (``kendalltau``, ties
    corrected; see the module docstring).

    Raises:
        ConfigError: If the sequences differ in length or hold a non-finite value.

    Example:
        >>> round(kendall_tau_b([1, 2, 2, 4, 5], [2, 1, 3, 3, 3]).value, 4)  # 4 / sqrt(9 * 7)
        0.504
    """
    counts = pair_counts(x, y)
    n, n0 = counts.n, counts.pairs
    if n < 2:
        return Agreement(
            statistic="kendall_tau_b", value=None, n=n, reason="needs at least 2 pairs"
        )
    if counts.tied_x == n0 or counts.tied_y == n0:
        return Agreement(
            statistic="kendall_tau_b",
            value=None,
            n=n,
            reason="a variable is constant: tau undefined",
        )
    s = counts.concordant - counts.discordant
    tau = s / math.sqrt((n0 - counts.tied_x) * (n0 - counts.tied_y))
    tau = max(-1.0, min(1.0, tau))
    tx, ty = list(Counter(x).values()), list(Counter(y).values())
    m = n * (n - 1)
    var = (
        m * (2 * n + 5)
        - sum(t * (t - 1) * (2 * t + 5) for t in tx)
        - sum(t * (t - 1) * (2 * t + 5) for t in ty)
    ) / 18.0
    var += 2.0 * sum(t * (t - 1) for t in tx) * sum(t * (t - 1) for t in ty) / m
    if n > 2:
        var += (
            sum(t * (t - 1) * (t - 2) for t in tx)
            * sum(t * (t - 1) * (t - 2) for t in ty)
            / (9.0 * m * (n - 2))
        )
    if var <= 0:
        return Agreement(
            statistic="kendall_tau_b", value=tau, n=n, reason="no variance: no p-value"
        )
    p = math.erfc(abs(s) / math.sqrt(var) / math.sqrt(2.0))
    return Agreement(statistic="kendall_tau_b", value=tau, n=n, p_value=min(1.0, p))
