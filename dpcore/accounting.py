"""Top-level accounting: turn a privacy event into an (ε, δ) guarantee.

``get_epsilon`` / ``get_delta`` dispatch an event tree to one of the accountants:

``"rdp"``
    Rényi DP (Mironov 2017) with exact subsampled-Gaussian RDP (Mironov, Talwar, Zhang 2019),
    sampling without replacement (Wang, Balle, Kasiviswanathan 2019) and the best valid RDP→DP
    conversion (Mironov 2017 Prop. 3; Canonne, Kamath, Steinke 2020 Prop. 12). See
    :mod:`dpcore.rdp_accountant`.
``"moments"``
    The moments accountant exactly as Abadi et al. 2016 define it (:mod:`dpcore.moments_accountant`).
``"analytic_gaussian"``
    Compositions of (unsampled) Gaussian mechanisms are exactly a Gaussian mechanism with
    μ² = Σ 1/σᵢ² (Dong, Roth, Su 2019, Cor. 3.3); ε from the exact analytic Gaussian
    δ(ε) (Balle & Wang 2018, Thm 8). Tight.
``"composition"``
    Pure / approximate DP parts composed by the optimal composition theorem (Kairouz, Oh,
    Viswanath 2015, Thm 3.3) when homogeneous, by basic composition otherwise.
``"shuffle"``
    A single :class:`~dpcore.events.ShuffledEvent`, by amplification by shuffling (Feldman,
    McMillan, Talwar 2021), rigorous numerical bound.
``"profile"``
    A single :class:`~dpcore.events.MechanismEvent` that supplies its privacy profile δ(ε):
    the least ε with δ(ε) ≤ δ, by bisection (upper end of the final bracket).
``"pld"``
    Privacy-loss distributions of dominating pairs (Zhu, Dong, Wang 2022), pessimistic
    "connect-the-dots" discretisation (Doroshenko et al. 2022) and FFT composition, with every
    float-error and truncation term added to δ: a certified upper bound plus an optimistic lower
    bound in ``details["bounds"]``. See :mod:`dpcore.pld`.
``"auto"`` (the default)
    Every accountant above that supports the event; the smallest ε (each is a valid upper bound),
    never above any of them at its default settings. The PLD runs first on a coarser grid
    (:func:`dpcore.pld.pld_epsilon` ``fast=True``), then at its default settings unless the fast
    run's *lower* bound already shows it cannot win; ``"moments"`` is not run (its bound is the
    Mironov conversion of integer-order RDP, never below ``"rdp"``'s). ``details["auto"]`` of the
    result says what was done: ``"chosen"``, ``"bounds"`` (name → the ε / δ of each accountant that
    gave one), ``"unsupported"`` (name → why it refused the event), ``"failed"`` (name → the
    ``ArithmeticError`` of an accountant whose numerics failed; such an accountant is skipped with
    an :class:`AccountantFailureWarning`, so that a numerical bug in one accountant is never hidden
    by the others), ``"skipped"`` (name → why it was not run) and ``"pld"`` (the fast and default
    runs' bounds).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ._validation import check_bool, check_choice, check_delta, check_nonnegative, check_rdp_only_options
from .events import (
    ApproxDpEvent,
    check_count,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    MechanismEvent,
    NonPrivateEvent,
    NoOpEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomAllocationEvent,
    SelfComposedEvent,
    ShuffledBatchesEvent,
    ShuffledEvent,
    UnsupportedEventError,
)
from .result import CertificationError, PrivacyResult, round_up

__all__ = ["ACCOUNTANTS", "AccountantFailureWarning", "PROFILE_MAX_EPSILON", "get_epsilon", "get_delta"]

#: Largest ε the ``"profile"`` accountant reports: its bracket doubles from ε = 1 and gives up beyond this.
PROFILE_MAX_EPSILON = 2.0**19

ACCOUNTANTS = ("rdp", "moments", "analytic_gaussian", "composition", "shuffle", "profile", "pld", "auto")


class AccountantFailureWarning(UserWarning):
    """``accountant="auto"`` skipped an accountant whose numerics failed (an ``ArithmeticError``)."""


# ----------------------------------------------------------------------------- tree flattening


def _flatten(event: PrivacyEvent, leaf: Callable[[PrivacyEvent], Optional[tuple]], accountant: str) -> List[Tuple[tuple, int]]:
    """Flatten Composed / SelfComposed nodes into ``[(leaf_key, count), …]``.

    ``leaf(e)`` returns a hashable key describing a supported leaf, ``()`` for a leaf that
    contributes nothing (NoOp), or ``None`` if unsupported (→ :class:`UnsupportedEventError`).
    """
    counts: Dict[tuple, int] = {}

    def walk(e: PrivacyEvent, mult: int) -> None:
        if isinstance(e, SelfComposedEvent):
            check_count("count", mult * e.count)  # nested counts multiply
            walk(e.event, mult * e.count)
        elif isinstance(e, ComposedEvent):
            for child in e.events:
                walk(child, mult)
        elif isinstance(e, RandomAllocationEvent) and e.num_selected > 1:
            walk(e.decomposed(), mult)
        elif isinstance(e, ShuffledBatchesEvent):  # no amplification claimed: one run of its event (replace_one)
            walk(e.dominating_event(), mult)
        else:
            key = leaf(e)
            if key is None:
                raise UnsupportedEventError(
                    f"the {accountant!r} accountant cannot analyse {type(e).__name__}; "
                    f"try accountant='auto' or another accountant"
                )
            if key:
                counts[key] = counts.get(key, 0) + mult

    walk(event, 1)
    return list(counts.items())


def _gaussian_leaf(e: PrivacyEvent) -> Optional[tuple]:
    if isinstance(e, NoOpEvent):
        return ()
    if isinstance(e, GaussianEvent):
        return (e.noise_multiplier,)
    return None


def _dp_leaf(e: PrivacyEvent) -> Optional[tuple]:
    if isinstance(e, NoOpEvent):
        return ()
    if isinstance(e, PureDpEvent):
        return (e.epsilon, 0.0)
    if isinstance(e, LaplaceEvent):
        return (round_up(1.0 / e.noise_multiplier), 0.0)
    if isinstance(e, ApproxDpEvent):
        return (e.epsilon, e.delta)
    if isinstance(e, MechanismEvent) and e.pure_epsilon is not None:
        return (e.pure_epsilon, 0.0)
    return _selection_leaf(e)


def _selection_leaf(e: PrivacyEvent) -> Optional[tuple]:
    """A :class:`~dpcore.selection.RepeatAndSelectEvent` around a pure ε-DP run: a pure leaf of
    (2 + η)·ε (Papernot & Steinke Thm 2 as λ → ∞; Liu & Talwar Thm 3.1 for the geometric case);
    the inner ε is the basic composition of its pure parts, rounded up."""
    from .selection import RepeatAndSelectEvent, pure_selection_epsilon

    if not isinstance(e, RepeatAndSelectEvent):
        return None
    try:
        parts = _flatten(e.event, _dp_leaf, "composition")
    except UnsupportedEventError:
        return None
    if any(key[1] > 0.0 for key, _ in parts):
        return None
    inner = round_up(math.fsum(key[0] * count for key, count in parts) * (1.0 + 2.0**-40))
    eps = pure_selection_epsilon(e, inner)
    return None if eps is None else (eps, 0.0)


def _contains_nonprivate(event: PrivacyEvent) -> bool:
    if isinstance(event, NonPrivateEvent):
        return True
    return any(_contains_nonprivate(c) for c in event.children())


def _nonprivate_result(event: PrivacyEvent, delta: float, accountant: str) -> PrivacyResult:
    return PrivacyResult(
        epsilon=math.inf, delta=delta, relation=event.relation, accountant=accountant,
        method="non-private release", precision="exact",
    )


# ----------------------------------------------------------------------------- accountants


def _analytic_gaussian_mu(event: PrivacyEvent) -> float:
    parts = _flatten(event, _gaussian_leaf, "analytic_gaussian")
    return math.sqrt(sum(count / (key[0] ** 2) for key, count in parts))


def _analytic_gaussian_epsilon(event: PrivacyEvent, delta: float) -> PrivacyResult:
    from .gaussian_mechanism import analytic_gaussian_epsilon

    mu = _analytic_gaussian_mu(event)
    if mu == 0.0:
        eps = 0.0
    else:
        eps = analytic_gaussian_epsilon(1.0 / mu, delta, 1.0)
    return PrivacyResult(
        epsilon=eps, delta=delta, relation=event.relation, accountant="analytic_gaussian",
        method="gaussian composition (mu^2 = sum 1/sigma_i^2) + analytic Gaussian (Balle & Wang 2018)",
        precision="float64", details={"mu": mu},
    )


def _analytic_gaussian_delta(event: PrivacyEvent, epsilon: float) -> PrivacyResult:
    from .gaussian_mechanism import analytic_gaussian_delta

    mu = _analytic_gaussian_mu(event)
    d = 0.0 if mu == 0.0 else analytic_gaussian_delta(1.0 / mu, epsilon, 1.0)
    return PrivacyResult(
        epsilon=epsilon, delta=d, relation=event.relation, accountant="analytic_gaussian",
        method="gaussian composition + analytic Gaussian (Balle & Wang 2018)", details={"mu": mu},
    )


def _no_finite_epsilon(event: PrivacyEvent, delta: float, why: str) -> PrivacyResult:
    """ε = ∞: no finite ε holds at this δ by the composition theorem used (``why`` says which floor)."""
    return PrivacyResult(math.inf, delta, event.relation, "composition", f"no finite epsilon: {why}",
                         precision="exact")


def _composition_epsilon(event: PrivacyEvent, delta: float) -> PrivacyResult:
    from .composition import _kov_floor, basic_composition, optimal_composition_epsilon

    parts = _flatten(event, _dp_leaf, "composition")
    if not parts:
        return PrivacyResult(0.0, delta, event.relation, "composition", "no private release")
    if len(parts) == 1:
        (eps_i, delta_i), count = parts[0]
        if count == 1:
            if delta_i > delta:
                return _no_finite_epsilon(event, delta, f"delta={delta} is below the mechanism's own delta {delta_i}")
            return PrivacyResult(eps_i, delta, event.relation, "composition", "single (epsilon, delta) mechanism")
        if not delta > _kov_floor(delta_i, count):
            return _no_finite_epsilon(event, delta, f"delta={delta} is at or below 1 - (1 - {delta_i})^{count}, "
                                                    "the least delta the k-fold composition reaches (KOV15)")
        eps = optimal_composition_epsilon(eps_i, delta_i, count, delta)
        return PrivacyResult(eps, delta, event.relation, "composition", "optimal composition (Kairouz, Oh, Viswanath 2015, Thm 3.3)",
                             details={"count": count})
    eps_sum, delta_sum = basic_composition(
        [k[0] * c for k, c in parts], [k[1] * c for k, c in parts]
    )
    if delta_sum > delta:
        return _no_finite_epsilon(event, delta, f"delta={delta} is below the sum of the parts' deltas ({delta_sum}), "
                                                "the least basic composition certifies")
    return PrivacyResult(eps_sum, delta, event.relation, "composition", "basic composition (heterogeneous parts)")


def _composition_delta(event: PrivacyEvent, epsilon: float) -> PrivacyResult:
    from .composition import optimal_composition_delta

    parts = _flatten(event, _dp_leaf, "composition")
    if not parts:
        return PrivacyResult(epsilon, 0.0, event.relation, "composition", "no private release")
    if len(parts) == 1:
        (eps_i, delta_i), count = parts[0]
        d = optimal_composition_delta(eps_i, delta_i, count, epsilon)
        return PrivacyResult(epsilon, d, event.relation, "composition", "optimal composition (Kairouz, Oh, Viswanath 2015)")
    eps_sum = sum(k[0] * c for k, c in parts)
    if epsilon < eps_sum:
        raise UnsupportedEventError(
            "heterogeneous composition: delta is only available at epsilon >= the sum of the parts' epsilons"
        )
    d = min(1.0, sum(k[1] * c for k, c in parts))
    return PrivacyResult(epsilon, d, event.relation, "composition", "basic composition (heterogeneous parts)")


def _shuffle_event(event: PrivacyEvent) -> ShuffledEvent:
    if not isinstance(event, ShuffledEvent):
        raise UnsupportedEventError("the 'shuffle' accountant analyses a single ShuffledEvent")
    if event.relation != "replace_one":
        raise UnsupportedEventError("amplification by shuffling (Feldman et al. 2021) holds for relation='replace_one'")
    return event


def _shuffle_epsilon(event: PrivacyEvent, delta: float) -> PrivacyResult:
    from .shuffling import shuffle_epsilon

    e = _shuffle_event(event)
    if e.delta0 > 0.0:
        from .shuffling import shuffle_epsilon_local_delta

        eps, delta_s, term = shuffle_epsilon_local_delta(e.epsilon0, e.n, delta, e.delta0)
        return PrivacyResult(eps, delta, e.relation, "shuffle",
                             "amplification by shuffling, rigorous numerical bound at delta_shuffle + "
                             "(e^eps+1)(1+e^-eps0/2)*n*delta0 for (eps0, delta0) local randomizers "
                             "(Feldman, McMillan, Talwar 2021, Thms 3.2, 3.8)",
                             details={"epsilon0": e.epsilon0, "n": e.n, "delta0": e.delta0, "delta_shuffle": delta_s,
                                      "local_delta_term": term})
    eps = shuffle_epsilon(e.epsilon0, e.n, delta, method="numeric")
    return PrivacyResult(eps, delta, e.relation, "shuffle",
                         "amplification by shuffling, rigorous numerical bound (Feldman, McMillan, Talwar 2021)",
                         details={"epsilon0": e.epsilon0, "n": e.n})


def _shuffle_delta(event: PrivacyEvent, epsilon: float) -> PrivacyResult:
    from .shuffling import shuffle_delta

    e = _shuffle_event(event)
    return PrivacyResult(epsilon, shuffle_delta(e.epsilon0, e.n, epsilon, e.delta0), e.relation, "shuffle",
                         "amplification by shuffling, rigorous numerical bound (Feldman, McMillan, Talwar 2021)"
                         + (" + (e^eps+1)(1+e^-eps0/2)*n*delta0 (Thm 3.8)" if e.delta0 > 0.0 else ""))


def _profile_event(event: PrivacyEvent) -> MechanismEvent:
    while isinstance(event, SelfComposedEvent) and event.count == 1:
        event = event.event
    if not isinstance(event, MechanismEvent) or event.privacy_profile is None:
        raise UnsupportedEventError(
            "the 'profile' accountant analyses a single MechanismEvent with a privacy_profile "
            "(composition of privacy profiles is not supported)")
    return event


def _profile_epsilon(event: PrivacyEvent, delta: float) -> PrivacyResult:
    mech = _profile_event(event)
    profile = mech.privacy_profile

    def ok(eps: float) -> bool:
        d = float(profile(eps))
        if math.isnan(d):
            raise ValueError(f"privacy_profile of {mech.name!r} returned NaN at epsilon={eps}")
        return d <= delta

    if ok(0.0):
        eps = 0.0
    else:
        hi = 1.0
        while not ok(hi):
            hi *= 2.0
            if hi > PROFILE_MAX_EPSILON:
                raise ValueError(f"privacy_profile of {mech.name!r} stays above delta={delta} up to "
                                 f"epsilon={PROFILE_MAX_EPSILON:g}")
        lo = 0.0 if hi == 1.0 else hi / 2.0
        while hi - lo > 1e-13 * hi:
            mid = 0.5 * (lo + hi)
            if ok(mid):
                hi = mid
            else:
                lo = mid
        eps = hi  # ok(hi) holds: the safe end of the bracket
    return PrivacyResult(eps, delta, mech.relation, "profile",
                         f"least epsilon with delta(epsilon) <= delta from the privacy profile of {mech.name}",
                         precision="bisection 1e-13 relative (safe end)")


def _profile_delta(event: PrivacyEvent, epsilon: float) -> PrivacyResult:
    mech = _profile_event(event)
    return PrivacyResult(epsilon, float(mech.privacy_profile(epsilon)), mech.relation, "profile",
                         f"privacy profile of {mech.name}")


def _rdp_epsilon(event: PrivacyEvent, delta: float, orders, optimize_order: bool, certify: bool) -> PrivacyResult:
    from .rdp_accountant import certify_rdp_epsilon, rdp_epsilon

    res = rdp_epsilon(event, delta, orders=orders, optimize_order=optimize_order)
    return certify_rdp_epsilon(event, delta, res) if certify else res


def _moments_epsilon(event: PrivacyEvent, delta: float) -> PrivacyResult:
    from .moments_accountant import moments_epsilon

    return moments_epsilon(event, delta)


def _pld_epsilon(event: PrivacyEvent, delta: float, certify: bool, fast: bool) -> PrivacyResult:
    from .pld import pld_epsilon

    return pld_epsilon(event, delta, certify=certify, fast=fast)


def _pld_delta(event: PrivacyEvent, epsilon: float, fast: bool) -> PrivacyResult:
    from .pld import pld_delta

    return pld_delta(event, epsilon, fast=fast)


def _smallest(runners: Dict[str, Callable[[], PrivacyResult]], key: Callable[[PrivacyResult], float],
              refine_pld: Optional[Callable[[], PrivacyResult]] = None,
              skipped: Optional[Dict[str, str]] = None) -> PrivacyResult:
    """``accountant="auto"``: run every accountant that supports the event; the best valid bound.

    ``runners["pld"]`` is the ``fast`` PLD. ``refine_pld`` runs the PLD at its default settings; it is
    run unless the fast PLD's *lower* bound (``details["bounds"][0]``, a bound on the exact ε or δ of
    the same dominating pairs) is already ≥ the best other bound — then no upper bound of those pairs,
    the default-settings PLD's included, can be smaller. So the result is never above any included
    accountant's result at its own default settings. An accountant whose numerics fail at extreme
    parameters (``ArithmeticError`` other than :class:`~dpcore.result.CertificationError`, which
    always propagates) gives no bound and is skipped, with an :class:`AccountantFailureWarning`; the
    error is re-raised if no accountant gives a bound. ``details["auto"]`` records the chosen
    accountant, every bound obtained, the accountants that refused the event or failed (with the
    reason) and those not run (``"skipped"``, with the reason)."""
    results: Dict[str, PrivacyResult] = {}
    unsupported: Dict[str, str] = {}
    failed: Dict[str, str] = {}
    failures: List[ArithmeticError] = []
    skipped = dict(skipped or {})

    def attempt(name: str, run: Callable[[], PrivacyResult]) -> Optional[PrivacyResult]:
        try:
            return run()
        except UnsupportedEventError as exc:
            unsupported[name] = str(exc)
        except CertificationError:
            raise  # a bound that failed its certification is never dropped silently
        except ArithmeticError as exc:
            failed[name] = f"{type(exc).__name__}: {exc}"
            failures.append(exc)
        return None

    for name, run in runners.items():
        if name == "pld" and "analytic_gaussian" in results:
            skipped["pld"] = ANALYTIC_EXACT_SKIPPED
            continue
        result = attempt(name, run)
        if result is not None:
            results[name] = result
    pld = {}
    if "pld" in results and refine_pld is not None:
        fast = results["pld"]
        others = {n: key(r) for n, r in results.items() if n != "pld"}
        best = min(others, key=others.get) if others else None
        floor = fast.details["bounds"][0]
        pld["fast"] = {"bounds": list(fast.details["bounds"]), "settings": "fast"}
        if best is not None and floor >= others[best]:
            skipped["pld (default settings)"] = (
                f"not needed: the fast PLD's lower bound {floor!r} is already ≥ the {best!r} bound {others[best]!r}, "
                "so no upper bound of the same dominating pairs (the default-settings PLD's included) is smaller")
        else:
            default = attempt("pld (default settings)", refine_pld)
            if default is not None:
                pld["default"] = {"bounds": list(default.details["bounds"]), "settings": "default"}
                if key(default) <= key(fast):
                    results["pld"] = default
    if not results:
        if failures:
            raise failures[0]
        raise UnsupportedEventError(
            "no accountant supports this event (" + "; ".join(f"{n}: {r}" for n, r in unsupported.items()) + ")")
    chosen = min(results, key=lambda name: key(results[name]))  # first of equals, in runner order
    if failed:
        warnings.warn(
            "accountant='auto' skipped " + "; ".join(f"{n} ({r})" for n, r in failed.items())
            + f" after a numerical failure; the result is the {chosen!r} bound, the smallest of the others",
            AccountantFailureWarning, stacklevel=3)
    details = dict(results[chosen].details)
    details["auto"] = {"chosen": chosen, "bounds": {n: key(r) for n, r in results.items()},
                       "unsupported": unsupported, "failed": failed, "skipped": skipped}
    if pld:
        details["auto"]["pld"] = pld
    return dataclasses.replace(results[chosen], details=details)


#: why ``accountant="auto"`` does not run the PLD when the analytic Gaussian accountant answers
ANALYTIC_EXACT_SKIPPED = ("not needed: the event composes unsampled Gaussians, whose analytic-Gaussian value is "
                          "exact (Balle & Wang 2018, Thm 8, at mu^2 = sum 1/sigma_i^2), so no upper bound of the "
                          "same pairs, the PLD's included, is smaller")
#: why ``accountant="auto"`` does not run the moments accountant
MOMENTS_SKIPPED = ("not run: its log moments are λ·D_{λ+1}, the integer-order RDP curve, and its ε the Mironov "
                   "conversion of it; the 'rdp' accountant evaluates those orders (2 … 33 are in its grid) with that "
                   "conversion and more, so its bound is never larger")


# ----------------------------------------------------------------------------- public API


def get_epsilon(
    event: PrivacyEvent,
    delta: float,
    *,
    accountant: str = "auto",
    orders: Optional[Sequence[float]] = None,
    optimize_order: Optional[bool] = None,
    certify: bool = False,
) -> PrivacyResult:
    """Smallest ε (an upper bound, rounded up) such that ``event`` is (ε, δ)-DP.

    Parameters
    ----------
    event : PrivacyEvent
        What the algorithm did (see :mod:`dpcore.events`).
    delta : float
        Target δ in (0, 1).
    accountant : {"rdp", "moments", "analytic_gaussian", "composition", "shuffle", "profile", "pld", "auto"}
        Which analysis to use (see the module docstring). ``"auto"`` (default) returns the
        smallest ε over every accountant that supports the event.
    orders : sequence of float, optional
        Rényi orders (> 1) for the RDP accountant; default :data:`dpcore.orders.DEFAULT_ORDERS`.
        Only with ``accountant`` ``"rdp"`` or ``"auto"`` (its RDP part); refused (``ValueError``) for
        any other accountant, which would ignore them; likewise ``optimize_order``.
    optimize_order : bool, optional
        RDP accountant: refine the optimal order continuously after the grid search (down to
        α = 1 + 1e-6). Default: on with the default grid, off when ``orders`` are given.
    certify : bool
        RDP accountant: recompute with mpmath at higher precision and raise
        :class:`~dpcore.result.CertificationError` unless the fast result is a confirmed upper bound.
        PLD accountant: re-check the leaf discretisation and the final δ in mpmath.

    Returns
    -------
    PrivacyResult
        ε, δ, relation, accountant, method, optimal order, precision, certification.

    Raises
    ------
    ValueError
        Bad δ or accountant name.
    UnsupportedEventError
        The chosen accountant cannot analyse the event under its neighbouring relation.
    """
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a dpcore PrivacyEvent; got {event!r}")
    delta = check_delta("delta", delta)
    accountant = check_choice("accountant", accountant, ACCOUNTANTS)
    certify = check_bool("certify", certify)  # certify="no" is truthy
    check_rdp_only_options(accountant, orders, optimize_order)
    if _contains_nonprivate(event):
        return _nonprivate_result(event, delta, accountant)
    if optimize_order is None:
        optimize_order = orders is None
    runners: Dict[str, Callable[[], PrivacyResult]] = {
        "rdp": lambda: _rdp_epsilon(event, delta, orders, bool(optimize_order), certify),
        "moments": lambda: _moments_epsilon(event, delta),
        "analytic_gaussian": lambda: _analytic_gaussian_epsilon(event, delta),
        "composition": lambda: _composition_epsilon(event, delta),
        "shuffle": lambda: _shuffle_epsilon(event, delta),
        "profile": lambda: _profile_epsilon(event, delta),
        "pld": lambda: _pld_epsilon(event, delta, certify, fast=accountant == "auto"),
    }
    if accountant != "auto":
        return runners[accountant]()
    del runners["moments"]
    return _smallest(runners, key=lambda r: r.epsilon, refine_pld=lambda: _pld_epsilon(event, delta, certify, False),
                     skipped={"moments": MOMENTS_SKIPPED})


def get_delta(
    event: PrivacyEvent,
    epsilon: float,
    *,
    accountant: str = "auto",
    orders: Optional[Sequence[float]] = None,
    optimize_order: Optional[bool] = None,
) -> PrivacyResult:
    """Smallest δ (an upper bound) such that ``event`` is (ε, δ)-DP.

    Parameters
    ----------
    event : PrivacyEvent
    epsilon : float
        ε ≥ 0, nats.
    accountant : {"rdp", "analytic_gaussian", "composition", "shuffle", "profile", "pld", "auto"}
        ``"auto"`` (default): the smallest δ over every accountant that supports the event.
    orders : sequence of float, optional
        Rényi orders for the RDP accountant (only with ``"rdp"`` or ``"auto"``, as in :func:`get_epsilon`).
    optimize_order : bool, optional
        RDP accountant: refine the order continuously. Default: on unless ``orders`` are given.
    """
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a dpcore PrivacyEvent; got {event!r}")
    eps = check_nonnegative("epsilon", epsilon)
    accountant = check_choice("accountant", accountant, tuple(a for a in ACCOUNTANTS if a != "moments"))
    check_rdp_only_options(accountant, orders, optimize_order)
    if _contains_nonprivate(event):
        return PrivacyResult(eps, 1.0, event.relation, accountant, "non-private release", precision="exact")

    def rdp() -> PrivacyResult:
        from .rdp_accountant import rdp_delta

        return rdp_delta(event, eps, orders=orders,
                         optimize_order=orders is None if optimize_order is None else bool(optimize_order))

    runners: Dict[str, Callable[[], PrivacyResult]] = {
        "rdp": rdp,
        "analytic_gaussian": lambda: _analytic_gaussian_delta(event, eps),
        "composition": lambda: _composition_delta(event, eps),
        "shuffle": lambda: _shuffle_delta(event, eps),
        "profile": lambda: _profile_delta(event, eps),
        "pld": lambda: _pld_delta(event, eps, fast=accountant == "auto"),
    }
    if accountant != "auto":
        return runners[accountant]()
    return _smallest(runners, key=lambda r: r.delta, refine_pld=lambda: _pld_delta(event, eps, False))
