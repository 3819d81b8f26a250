"""Sensitivity conformance of what runs (issue 21): every solver's releases, replayed on hypothesis-driven
adversarial neighbours, move by at most the Δ their events were built with; the planted variants and the real
ℓq leak are caught.

Neighbours: rows at the norm bound, dense rows c·𝟏, Dirac rows, zero rows, entries scaled by 1e-300 … 1e300
(where the solver accepts them), labels at the ends of their range; clip norms and truncation levels from
1e-300 to 1e300; p ∈ {1.001, 1.01, 1.5, 2}. Derandomized hypothesis (fixed examples; no false alarms to
budget for: a verdict is exact up to the bounded rounding slack).

The ℓp solvers' dual norms and the fused network clip factor come from the sensitivity room
(algorithms/clipping.py): the issue's attack row and the underflowing network gradient are explicit examples
(hypothesis runs those first); before the fix both were violated (ratio 100.3 at p = 1.001, 127 at p = 1.01).
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, find, given, reject, settings
from hypothesis import strategies as st

from audits.conformance import COVERAGE, SOLVERS, check_solver, library_solver
from audits.exact_norms import exact, lp_norm, mirror_gradient, rounded_down, rounded_up
from audits.planted_bugs import REPLAY_PLANTED, replay_planted
from audits.replay import differing_index

FAST = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
MAGNITUDES = (1.0, 1e-3, 1e3, 1e-170, 1e-300, 1e300)
KINDS = ("zero", "dense", "gaussian", "dirac", "bound")



# ------------------------------------------------------------------------------------------- strategies
def _row(kind: str, d: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    if kind == "zero":
        return np.zeros(d)
    if kind == "dense":
        return np.full(d, 0.4 * scale)
    if kind == "dirac":
        row = np.zeros(d)
        row[rng.integers(d)] = scale
        return row
    v = rng.normal(size=d)
    v /= np.linalg.norm(v)
    return v * scale if kind == "bound" else v * scale * rng.random()


@st.composite
def neighbours(draw, labels="binary", scales=MAGNITUDES, n_max=5, d_min=2, d_max=5):
    """(D, D′, scale): n ≤ n_max base records of one magnitude, record i replaced (features and/or label)."""
    n = draw(st.integers(2, n_max))
    d = draw(st.integers(d_min, d_max))
    scale = draw(st.sampled_from(scales))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = np.array([_row(draw(st.sampled_from(KINDS)), d, scale, rng) for _ in range(n)])
    if labels == "binary":
        y = rng.choice([-1.0, 1.0], size=n)
        new_label = draw(st.sampled_from([-1.0, 1.0]))
    else:
        y = rng.choice([-1.0, 0.0, 1.0], size=n)
        new_label = draw(st.sampled_from([-1.0, 1.0, 0.0]))
    i = draw(st.integers(0, n - 1))
    X1, y1 = X.copy(), y.copy()
    X1[i] = _row(draw(st.sampled_from(KINDS)), d, scale, rng)
    y1[i] = new_label
    return (X, y), (X1, y1), scale


def _run(name, D, D1, **kw):
    """check_solver, with a refusal of the data (ValueError, e.g. a smoothness that overflows) rejected."""
    try:
        return check_solver(name, D, D1, seed=kw.pop("seed", 0), **kw)
    except ValueError:
        reject()


CLIPS = st.sampled_from([1e-300, 1e-200, 1e-3, 0.05, 1.0, 1e3, 1e300])
GRADIENT = ("dp_gd", "dp_sgd", "rrpsgd", "dp_accmd", "dp_srm", "dp_svrg")


# -------------------------------------------------------------------------------- the harness itself
def test_exact_norms_do_not_underflow_and_match_closed_forms():
    row = np.full(20, 0.4)
    assert float(lp_norm(exact(row), 1001.0)) == pytest.approx(0.4 * 20 ** (1 / 1001), rel=1e-15)
    assert float(lp_norm(exact(np.full(3, 1e-200)), 2)) == pytest.approx(math.sqrt(3) * 1e-200, rel=1e-15)
    assert rounded_up(lp_norm(exact(np.full(3, 1.5e308)), 2)) == math.inf  # beyond float64 (exact in mpmath)
    assert rounded_up(lp_norm(exact(np.full(3, 1e300)), 2)) == pytest.approx(math.sqrt(3) * 1e300, rel=1e-15)
    assert rounded_up(lp_norm(exact([3.0, 4.0]), 2)) == 5.0 == rounded_down(lp_norm(exact([3.0, 4.0]), 2))
    assert rounded_down(lp_norm(exact([1.0, 1.0]), 2)) < math.sqrt(2) <= rounded_up(lp_norm(exact([1.0, 1.0]), 2))
    # ∇Φ inverts the library's ∇Φ* (mirror_inverse_kernel) at p = 1.001 (κ = 2 ln d, s = (1 + κ)/κ)
    from algorithms.mirror_maps import lp_geometry, mirror_inverse_kernel

    geo = lp_geometry(1.001, 20)
    theta = np.random.default_rng(0).normal(size=20)
    w = np.empty(20)
    mirror_inverse_kernel(theta, geo.r, geo.kappa, w)
    back = [float(v) for v in mirror_gradient(exact(w), geo.s, geo.kappa)]
    assert np.allclose(back, theta, rtol=1e-13)


def test_replay_measures_the_true_change_not_just_a_bound():
    """Replacing (x, +1) by (x, −1) at w0 = 0 (logistic, ℓ′ = ∓1/2, clip C ≥ ‖x‖/2) moves the clipped sum by
    exactly ‖x‖: the harness recovers that value, and exactly Δ = 2C when C = ‖x‖/4 binds."""
    X = np.array([[0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([1.0, 1.0])
    y1 = np.array([-1.0, 1.0])
    for name in GRADIENT + ("noisy_mirror_descent",):
        check = check_solver(name, (X, y), (X, y1), seed=3, clip_norm=1.0).checks[0]
        assert check.measured == pytest.approx(1.0 / (len(y) if name == "noisy_mirror_descent" else 1), rel=1e-12)
        at_clip = check_solver(name, (X, y), (X, y1), seed=3, clip_norm=0.25).worst
        assert at_clip.measured == pytest.approx(at_clip.declared, rel=1e-12) and at_clip.verdict == "conforms"
        assert at_clip.ratio > 1.0 - 1e-8  # the rounding slack of the mirror-map inversion is ~5e-10 relative


def test_coverage_is_stated_for_every_solver():
    assert len(SOLVERS) == 18 and set(COVERAGE) == set(SOLVERS)
    assert all(len(text) > 80 for text in COVERAGE.values())


def test_bad_pairs_are_refused():
    X = np.zeros((3, 2))
    y = np.ones(3)
    with pytest.raises(ValueError, match="D_prime must replace one record"):
        check_solver("dp_gd", (X, y), (np.zeros((5, 2)), np.ones(5)))
    with pytest.raises(ValueError, match="name"):
        check_solver("no_such_solver", (X, y), (X, y))
    with pytest.raises(ValueError, match="replace_one"):  # DP-GD's claim is replace-one
        check_solver("dp_gd", (X, y), (np.zeros((4, 2)), np.ones(4)))


# ------------------------------------------------------------------------ gradient-perturbation solvers
@pytest.mark.parametrize("name", GRADIENT)
@FAST
@given(case=neighbours(), clip=CLIPS, loss=st.sampled_from(["logistic", "smoothed_hinge"]),
       w0_scale=st.sampled_from([0.0, 1e-3, 1.0, 30.0]))
def test_gradient_solvers_conform(name, case, clip, loss, w0_scale):
    D, D1, _ = case
    w0 = w0_scale * np.random.default_rng(1).normal(size=D[0].shape[1])
    report = _run(name, D, D1, clip_norm=clip, loss=loss, w0=w0)
    assert report.verdict == "conforms", report.to_dict()


@pytest.mark.parametrize("name", ("dp_gd", "dp_sgd", "dp_srm"))
@FAST
@given(case=neighbours(labels="regression"), clip=CLIPS, loss=st.sampled_from(["huber", "squared"]))
def test_gradient_solvers_conform_on_regression_losses(name, case, clip, loss):
    D, D1, scale = case
    report = _run(name, D, D1, clip_norm=clip, loss=loss, w0=np.full(D[0].shape[1], 0.5))
    assert report.verdict == "conforms", report.to_dict()


@FAST
@given(case=neighbours(), clip=CLIPS, record_scale=st.sampled_from([0.4, 1.0, 1e-170, 1e300]))
def test_dp_sgd_add_remove_conforms(case, clip, record_scale):
    """Poisson sampling (add/remove, Δ = C): D′ = D plus one dense record."""
    (X, y), _, _ = case
    X1 = np.vstack([X, np.full((1, X.shape[1]), record_scale)])
    report = _run("dp_sgd", (X, y), (X1, np.append(y, -1.0)), clip_norm=clip)
    assert report.checks[0].relation == "add_remove" and report.checks[0].declared == clip
    assert report.verdict == "conforms", report.to_dict()


@pytest.mark.parametrize("name", ("dp_svrg", "dp_svrg_pp"))
@FAST
@given(case=neighbours(labels="regression", scales=(1.0, 1e-3, 1e3)), clip=st.sampled_from([1e-3, 0.05, 1.0]),
       loss=st.sampled_from(["huber", "squared"]))
def test_svrg_inner_release_conforms(name, case, clip, loss):
    """DP-SVRG's inner release: the differing records get label 0 (zero gradient at w0 = 0), so the snapshot and x₁
    coincide and the second inner query is replayed at the same point."""
    (X, y), (X1, y1), _ = case
    i = differing_index((X, y), (X1, y1))
    y, y1 = y.copy(), y1.copy()
    y[i] = y1[i] = 0.0
    if np.array_equal(X[i], X1[i]):
        reject()  # the records now coincide: nothing to replay
    report = _run(name, (X, y), (X1, y1), clip_norm=clip, loss=loss)
    assert [c.release for c in report.checks] == ["inner clipped gradient-difference sum at x1"]
    assert report.verdict == "conforms", report.to_dict()


# ---------------------------------------------------------------------------------------- ℓp solvers
@FAST
@given(case=neighbours(), clip=CLIPS, p=st.sampled_from([1.001, 1.01, 1.5]))
def test_noisy_mirror_descent_gaussian_noise_conforms(case, clip, p):
    """``noise="gaussian"`` clips in ℓ2 (the safe row norms): conforms at every magnitude and p."""
    D, D1, _ = case
    report = _run("noisy_mirror_descent", D, D1, clip_norm=clip, p=p, noise="gaussian")
    assert report.verdict == "conforms", report.to_dict()


@FAST
@given(case=neighbours(), clip=CLIPS, p=st.sampled_from([1.001, 1.01, 1.5, 2.0]))
def test_phased_dp_sgd_conforms(case, clip, p):
    D, D1, _ = case
    report = _run("phased_dp_sgd", D, D1, clip_norm=clip, p=p)
    assert report.verdict == "conforms", report.to_dict()


LQ = (("noisy_mirror_descent", "clip_norm", {"noise": "generalized_gaussian"}),
      ("batched_truncated_mirror_descent", "truncation", {}),
      ("shuffled_truncated_mirror_descent", "truncation", {}))


LQ_LEVEL = {name: level_name for name, level_name, _ in LQ}


@pytest.mark.parametrize("name,level_name,extra", LQ)
@FAST
@given(case=neighbours(scales=(1.0, 1e-1, 1e2)), level=st.sampled_from([1e-3, 0.05, 1.0, 1e3]))
def test_lq_solvers_conform_at_moderate_magnitudes(name, level_name, extra, case, level):
    """The ℓq releases at p = 1.5 (q = 3) and entries ≥ 0.04: no power underflows, the replay conforms."""
    D, D1, _ = case
    report = _run(name, D, D1, p=1.5, **{level_name: level}, **extra)
    assert report.verdict == "conforms", report.to_dict()


_ATTACK = ((np.zeros((20, 20)), np.ones(20)), (np.vstack([np.full((1, 20), 0.4), np.zeros((19, 20))]), np.ones(20)),
           1.0)


@pytest.mark.parametrize("name,level_name,extra", LQ)
@FAST
@given(case=neighbours(), level=CLIPS, p=st.sampled_from([1.001, 1.01, 1.5]))
@example(case=_ATTACK, level=1e-3, p=1.001)
def test_lq_solvers_conform_everywhere(name, level_name, extra, case, level, p):
    """Issue 21's attack as the first example: row 0.4·𝟏 at p = 1.001, clip / truncation 1e-3 (measured ratio 100)."""
    D, D1, _ = case
    report = _run(name, D, D1, p=p, **{level_name: level}, **extra)
    assert report.verdict == "conforms", report.to_dict()


# -------------------------------------------------------------------------- perturbation family, AdaSSP
@pytest.mark.parametrize("name,kw", [
    ("output_perturbation_gd", {"alpha": 0.1}),
    ("output_perturbation_gd", {"alpha": 0.1, "method": "gd", "steps": 20}),
    ("output_perturbation_gd", {"alpha": 0.0, "method": "gd", "steps": 20, "delta": 0.0}),
    ("objective_perturbation", {"alpha": 0.0}),
    ("approximate_minima_perturbation", {"alpha": 0.01}),
    ("approx_objective_perturbation", {"alpha": 0.01}),
])
@FAST
@given(case=neighbours(scales=(1.0, 1e-3, 1e3, 1e-170, 1e300)),
       loss=st.sampled_from(["logistic", "huber", "smoothed_hinge"]))
def test_perturbation_solvers_conform(name, kw, case, loss):
    """Rows up to the (tightest) norm bound the data satisfy; labels ±1 (±h for Huber, at the end of the range)."""
    D, D1, _ = case
    report = _run(name, D, D1, loss=loss, **kw)
    assert report.verdict == "conforms", report.to_dict()


@pytest.mark.parametrize("name", ("adassp", "adassp_joint"))
@FAST
@given(case=neighbours(labels="regression", scales=(1.0, 1e-3, 1e3, 1e-100, 1e100)),
       relation=st.sampled_from(["replace_one", "add_remove"]), target=st.sampled_from([1.0, 10.0]))
def test_adassp_releases_conform(name, case, relation, target):
    """Both variants, both relations; labels at ±Y (Y = ``target``·max|y|)."""
    D, D1, _ = case
    (X, y), (X1, y1) = D, D1
    y, y1 = y * target, y1 * target
    if relation == "add_remove":
        X1, y1 = np.vstack([X, X1[:1]]), np.append(y, y1[0])
    report = _run(name, (X, y), (X1, y1))
    assert report.verdict == "conforms", report.to_dict()


# ------------------------------------------------------------------------------------------ the network
@FAST
@given(case=neighbours(scales=(1.0, 1e-3, 1e3, 1e-170, 1e300)),
       solver=st.sampled_from(["dp_gd", "dp_sgd", "rrpsgd", "dp_srm"]), clip=st.sampled_from([1e-3, 0.1, 1.0, 1e3]),
       multiclass=st.booleans())
def test_network_conforms(case, solver, clip, multiclass):
    (X, y), (X1, y1), _ = case
    if multiclass:  # labels 0, 1, 2 (softmax); the differing record gets label 2
        i = differing_index((X, y), (X1, y1))
        y, y1 = (y + 1.0), (y1 + 1.0)
        y1[i] = 2.0
    report = _run("DPMLPClassifier", (X, y), (X1, y1), solver=solver, clip_norm=clip)
    assert report.verdict == "conforms", report.to_dict()


def _extreme_theta(d: int, h: int = 3, margin: float = 390.0) -> np.ndarray:
    """Weights whose per-example gradient has every entry ~e^{−390} ≈ 1e-170: W₁ = b₁ = 0 (z = 0), W₂ = 1,
    b₂ = 390 (logistic margin 390 for label +1), so Σ of the squared entries underflows."""
    theta = np.zeros(h * (d + 1) + h + 1)
    theta[h * (d + 1):h * (d + 1) + h] = 1.0
    theta[-1] = margin
    return theta


def test_network_clip_bounds_underflowing_gradients():
    """Label +1 → −1 of one record at weights where the +1 gradient is ~1e-170 and the clip norm 1e-200."""
    X = np.full((3, 2), 0.5)
    y, y1 = np.ones(3), np.array([-1.0, 1.0, 1.0])
    report = check_solver("DPMLPClassifier", (X, y1), (X, y), seed=0, clip_norm=1e-200, theta=_extreme_theta(2),
                          theta_prev=_extreme_theta(2, margin=389.0))
    assert report.verdict == "conforms", report.to_dict()


# --------------------------------------------------------------------------------------- planted bugs
_TINY = ((np.full((4, 3), 1e-170), np.ones(4)), (np.full((4, 3), 1e-170), np.array([-1.0, 1, 1, 1])), 1e-170)
_UNIT = ((np.eye(3)[[0, 1, 2, 0]], np.ones(4)), (np.eye(3)[[0, 1, 2, 0]], np.array([-1.0, 1, 1, 1])), 1.0)
_P101 = ((np.zeros((6, 6)), np.ones(6)), (np.vstack([np.full((1, 6), 5e-4), np.zeros((5, 6))]), np.ones(6)), 5e-4)
PLANTED_CASES = [("norm-underflow", name, _P101, {"p": 1.01, LQ_LEVEL[name]: 1e-6, **extra}) for name, _, extra in LQ]
PLANTED_CASES += [("clip-skipped-at-zero-norm", name, _TINY, {"clip_norm": 1e-200}) for name in GRADIENT]
PLANTED_CASES += [("unclipped-bias", "dp_gd", _UNIT, {"clip_norm": 0.01})]


def test_every_planted_variant_has_a_case():
    assert {(bug, name) for bug, name, _, _ in PLANTED_CASES} == {
        (bug, name) for bug, (names, _) in REPLAY_PLANTED.items() for name in names}


@pytest.mark.parametrize("bug,name,case,kw", PLANTED_CASES, ids=[f"{b}-{n}" for b, n, _, _ in PLANTED_CASES])
def test_planted_variants_are_caught(bug, name, case, kw):
    """Each planted variant is flagged (ratio ≥ 50) where its twin, the same solver's correct code path on the same
    pair, conforms."""
    D, D1, _ = case
    planted = check_solver(name, D, D1, seed=1, solve=replay_planted(bug, name), **kw)
    assert planted.verdict == "violated" and planted.worst.ratio > 50, planted.to_dict()
    assert check_solver(name, D, D1, seed=1, **kw).verdict == "conforms"


@pytest.mark.parametrize("bug,name,kw", [
    ("clip-skipped-at-zero-norm", "dp_gd", {}),
    ("unclipped-bias", "dp_gd", {"clip_norm": 0.01}),
    ("norm-underflow", "batched_truncated_mirror_descent", {"p": 1.01, "truncation": 1e-6}),
])
def test_hypothesis_search_finds_the_planted_bugs(bug, name, kw):
    """The adversarial neighbour search itself (not a hand-made pair) finds a violating pair of each planted bug."""
    solve = replay_planted(bug, name)

    def violated(args):
        (D, D1, scale), clip = args
        extra = dict(kw) if "clip_norm" in kw or "truncation" in kw else {"clip_norm": clip}
        try:
            return check_solver(name, D, D1, seed=0, solve=solve, **extra).verdict == "violated"
        except ValueError:
            return False

    D, D1, scale = find(st.tuples(neighbours(), CLIPS), violated,
                        settings=settings(max_examples=300, deadline=None, database=None, derandomize=True))[0]
    assert scale in MAGNITUDES


# ---------------------------------------------------------------------------- refused, data-independently
@pytest.mark.parametrize("name", [s for s in SOLVERS])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_records_are_refused_before_the_run(name, bad):
    """A NaN / ±inf feature or label is refused with ValueError before any noise is drawn (nothing is released):
    by the harness (naming D_prime) and by the library solver itself."""
    X = np.eye(3)[[0, 1, 2, 0]]
    y = np.array([1.0, -1.0, 1.0, -1.0])
    public = {"data_norm_bound": 1.0} if name in BOUND_SOLVERS else {}
    if name.startswith("adassp"):
        public["target_bound"] = 1.0
    if name == "DPMLPClassifier":
        public["classes"] = [-1.0, 1.0]
    if "mirror" in name:
        public["p"] = 1.5
    solver = library_solver(name)
    for X1, y1 in ((X.copy(), y), (X, y.copy())):
        if X1 is not X:
            X1[2, 1] = bad
        else:
            y1[2] = bad
        with pytest.raises(ValueError, match="D_prime must contain only finite"):
            check_solver(name, (X, y), (X1, y1), seed=0, **public)
        with pytest.raises(ValueError, match="finite|labels"):
            if isinstance(solver, type):
                solver(epsilon=1.0, delta=1e-5, random_state=0, **public).fit(X1, y1)
            else:
                solver(X1, y1, epsilon=1.0, delta=1e-5, rng=0, **public)


def _two_labels_flipped():
    """Six identical records; flipping two labels changes the clipped gradient sum by 2·(2C): twice dp_gd's Δ.
    Before the pair was validated, check_solver replayed it and reported the correct dp_gd "violated", ratio 2.0."""
    X = np.tile([[0.6, 0.8]], (6, 1))
    y = np.ones(6)
    y2 = y.copy()
    y2[:2] = -1.0
    return (X, y), (X, y2)


@pytest.mark.parametrize("make_pair, match", [
    (_two_labels_flipped, "exactly one record .*2 changed records"),
    (lambda: ((np.eye(3), np.ones(3)), (np.eye(3), np.ones(3))), "identical datasets"),
    (lambda: ((np.eye(3), np.ones(3)), (np.eye(3) + 0j, np.ones(3))), "D_prime features X .*complex"),
    (lambda: ((np.eye(3), np.ones(3)), (np.eye(3).astype(str), np.ones(3))), "D_prime features X .*strings"),
    (lambda: ((np.eye(3), np.ones(3)), (np.eye(3), np.array(["1", "1", "-1"]))), "D_prime labels y .*strings"),
    (lambda: ((np.eye(3), np.ones(3)), (np.eye(3)[[0, 1, 2, 0, 1]], np.ones(5))), "sizes 3 and 5"),
    (lambda: ((np.eye(3), np.ones(3)), (np.eye(3)[[1, 0, 2, 0]], np.ones(4))), "appended last"),
    (lambda: ((np.eye(3), np.ones(3)), np.eye(3)), "D_prime must be a pair"),
])
def test_pairs_that_are_not_neighbours_are_refused(make_pair, match):
    """Issue 21 review: a non-neighbouring pair gave a false alarm (two labels flipped: "violated", ratio 2.0),
    complex / string data was cast silently, and identical datasets "conformed"; each is now a ValueError."""
    D, D1 = make_pair()
    with pytest.raises(ValueError, match=match):
        check_solver("dp_gd", D, D1, seed=0, clip_norm=0.1)


def test_one_flipped_label_of_the_same_records_conforms_at_ratio_one():
    """The neighbour of the false-alarm pair above (one label flipped) is accepted and conforms with ratio 1:
    Δ = 2C is attained, not exceeded."""
    (X, y), (_, y2) = _two_labels_flipped()
    y2[1] = 1.0
    report = check_solver("dp_gd", (X, y), (X, y2), seed=0, clip_norm=0.1)
    assert report.verdict == "conforms" and report.worst.ratio == pytest.approx(1.0, rel=1e-9)


BOUND_SOLVERS = ("output_perturbation_gd", "objective_perturbation", "approximate_minima_perturbation",
                 "approx_objective_perturbation", "adassp", "adassp_joint", "phased_dp_sgd")
