"""Issue 26: sparse data kept sparse, the estimators' row layouts (row scale, virtual intercept), memory,
multiclass (softmax and one-vs-rest) and their privacy — each checked on what runs.
"""

import math
import tracemalloc
import warnings

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp

import dpcore
from algorithms import (
    DPLogisticRegression, approx_objective_perturbation, approximate_minima_perturbation,
    batched_truncated_mirror_descent, dp_accmd, dp_gd, dp_sgd, dp_srm, dp_svrg, dp_svrg_pp, noisy_mirror_descent,
    objective_perturbation, output_perturbation_gd, phased_dp_sgd, rrpsgd, shuffled_truncated_mirror_descent,
)
from algorithms._data import MAX_DENSE_BYTES, as_design, lq_row_norms, prepare_data
from algorithms.clipping import lq_row_norms_kernel
from algorithms.clipping import clipped_batch_gradient_sum_kernel
from algorithms.multiclass import ovr_budget, softmax_clipped_sum_kernel
from algorithms.rows import CSRRows, DenseRows
from dpcore.events import ApproxDpEvent, SelfComposedEvent

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

GEN = np.random.default_rng(26)
N, D = 240, 12
XS = GEN.standard_normal((N, D)) * (GEN.random((N, D)) < 0.35)
XS /= np.maximum(1.0, 1.001 * np.linalg.norm(XS, axis=1))[:, None]
YS = np.where(XS @ GEN.standard_normal(D) + 0.2 * GEN.standard_normal(N) > 0, 1.0, -1.0)
CSR = sp.csr_matrix(XS)

SOLVERS = [
    (objective_perturbation, {"delta": 1e-5, "alpha": 0.01}),
    (objective_perturbation, {"delta": 0.0, "alpha": 0.01}),
    (approximate_minima_perturbation, {"delta": 1e-5, "alpha": 0.01}),
    (approx_objective_perturbation, {"delta": 1e-5, "alpha": 0.01}),
    (approx_objective_perturbation, {"delta": 1e-5, "alpha": 0.01, "constraint": "l2", "radius": 3.0}),
    (output_perturbation_gd, {"delta": 1e-5, "alpha": 0.01}),
    (output_perturbation_gd, {"delta": 1e-5, "alpha": 0.01, "method": "gd", "steps": 30}),
    (dp_gd, {"data_norm_bound": 1.0, "l1": 1e-3, "steps": 20}),
    (dp_sgd, {"data_norm_bound": 1.0, "sampling": "without_replacement", "batch_size": 32, "epochs": 2}),
    (dp_svrg, {"data_norm_bound": 1.0, "alpha": 0.01, "epochs": 2}),
    (dp_svrg_pp, {"data_norm_bound": 1.0, "epochs": 2}),
    (dp_accmd, {"data_norm_bound": 1.0, "steps": 20}),
    (dp_srm, {"data_norm_bound": 1.0, "steps": 10}),
    (rrpsgd, {"data_norm_bound": 1.0}),
    (phased_dp_sgd, {"data_norm_bound": 1.0}),
    (noisy_mirror_descent, {"data_norm_bound": 1.0, "p": 1.5}),
    (batched_truncated_mirror_descent, {"data_norm_bound": 1.0, "p": 1.2}),
    (shuffled_truncated_mirror_descent, {"data_norm_bound": 1.0, "p": 1.5}),
]


def _ids(p):
    return p[0].__name__ + ("" if len(p[1]) < 3 else "-" + "-".join(f"{k}" for k in sorted(p[1])[:2]))


@pytest.mark.parametrize("solver, kw", SOLVERS, ids=[_ids(p) for p in SOLVERS])
def test_sparse_run_keeps_csr_and_equals_the_dense_run(solver, kw, monkeypatch):
    """CSR input is never densified (a dense copy would fail here) and gives the dense model of the same
    seed to rounding, with the same privacy event."""
    dense = solver(XS, YS, epsilon=1.0, rng=7, **kw)
    monkeypatch.setattr("algorithms._data.MAX_DENSE_BYTES", 0)  # any densification now raises
    sparse = solver(CSR, YS, epsilon=1.0, rng=7, **kw)
    np.testing.assert_allclose(sparse.weights, dense.weights, rtol=1e-9, atol=1e-10)
    assert sparse.privacy.epsilon == dense.privacy.epsilon <= 1.0
    assert repr(sparse.event) == repr(dense.event)


def test_newton_cg_and_the_explicit_hessian_reach_the_same_certified_minimiser(monkeypatch):
    """Above EXPLICIT_HESSIAN_MAX_D the Newton direction comes from preconditioned CG (sparse, large d): same
    minimiser as the Cholesky path, and objective perturbation's certificate holds on it."""
    import algorithms._perturbation as pert
    from algorithms.losses import get_loss

    gen = np.random.default_rng(5)
    X = sp.random(400, 300, density=0.05, format="csr", random_state=5)
    X = sp.csr_matrix(X / np.maximum(1.0, sp.linalg.norm(X, axis=1))[:, None])
    y = np.where(gen.random(400) < 0.5, 1.0, -1.0)
    loss, lin = get_loss("logistic"), gen.standard_normal(300) * 1e-3
    rows = as_design(X).rows
    cg = pert.newton_solve(loss, rows, y, 1e-3, lin, tol=1e-11)[0]
    monkeypatch.setattr(pert, "EXPLICIT_HESSIAN_MAX_D", 1000)
    chol = pert.newton_solve(loss, rows, y, 1e-3, lin, tol=1e-11)[0]
    np.testing.assert_allclose(cg, chol, atol=1e-7)
    res = objective_perturbation(X, y, epsilon=1.0, delta=1e-5, alpha=1e-3, rng=0)
    assert res.details["certified_grad_norm"] <= 1e-10


def test_intercept_and_row_scale_layouts_equal_the_materialised_rows():
    """A virtual intercept column c and a per-row scale s read by the kernels give the model of the
    materialised rows [s·x, c] (dense and CSR)."""
    scale = np.where(GEN.random(N) < 0.3, 0.5, 1.0)
    mat = np.hstack([XS * scale[:, None], np.full((N, 1), 0.5)])
    for base in (XS, CSR):
        design = as_design(base)
        design = design.with_row_scale(scale, scale * design.x_norms).with_intercept(0.5)
        np.testing.assert_allclose(design.toarray(), mat, rtol=0, atol=0)
        np.testing.assert_allclose(design.row_norms, np.linalg.norm(mat, axis=1), rtol=1e-14)
        for solver, kw in ((objective_perturbation, {"delta": 1e-5, "alpha": 0.01}),
                           (dp_sgd, {"sampling": "without_replacement", "batch_size": 16, "epochs": 1})):
            a = solver(mat, YS, epsilon=1.0, rng=3, data_norm_bound=1.2, **kw)
            b = solver(design, YS, epsilon=1.0, rng=3, data_norm_bound=1.2, **kw)
            np.testing.assert_allclose(b.weights, a.weights, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("q", [1.5, 3.0, 1001.0, math.inf])
def test_lq_row_norms_of_every_layout_match_the_materialised_rows(q):
    """The dual norms the mirror solvers truncate with: a CSR / scaled / intercept layout gives the ℓq norms of
    the materialised rows (the room's lq_norm on both sides) to a few roundings, extreme rows included."""
    extreme = sp.csr_matrix(np.pad(_extreme_csr().toarray(), ((0, 0), (0, D - 3))))
    rows = sp.vstack([CSR, extreme]).tocsr()
    scale = np.where(np.arange(rows.shape[0]) % 3 == 0, 0.25, 1.0)
    design = as_design(rows)
    design = design.with_row_scale(scale, scale * design.x_norms).with_intercept(0.75)
    mat = design.toarray()
    np.testing.assert_allclose(lq_row_norms(design.rows, q), lq_row_norms_kernel(mat, q), rtol=1e-14)
    np.testing.assert_array_equal(lq_row_norms(XS, q), lq_row_norms_kernel(XS, q))


# ------------------------------------------------------------------------ per-record contribution


def _exact_norm(v) -> mpmath.mpf:
    with mpmath.workdps(60):
        return mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(t)) ** 2 for t in v))


def _worst_contribution(rows, row_norms, y, w, clip, loss_kind=0):
    """max over records of ‖clip_C(∇ℓ(w; row i))‖₂ / C, each record summed alone by the kernel and its
    norm taken exactly (mpmath) — independent of the kernels' norm code."""
    worst = 0.0
    out = np.empty(rows.shape[1])
    for i in range(rows.shape[0]):
        clipped_batch_gradient_sum_kernel(loss_kind, 0.0, rows, y, row_norms, w, np.array([i]), 1, clip, out)
        worst = max(worst, float(_exact_norm(out) / mpmath.mpf(clip)))
    return worst


def _extreme_csr():
    """CSR rows with entries near 1e-300 and 1e300 (and ordinary ones), canonical."""
    rows = [[1e-300, 3e-300, 0.0], [1e300, -1e300, 5e299], [0.3, 0.0, -0.4], [1e-170, 1e-170, 1e-170],
            [0.0, 2e-308, 0.0], [7e299, 0.0, 1e-300]]
    return sp.csr_matrix(np.array(rows))


@pytest.mark.parametrize("intercept", [0.0, 0.75])
def test_sparse_per_record_contribution_never_exceeds_the_clip(intercept):
    """The bound of the clipped sum's sensitivity, replayed record by record on CSR rows (with a row scale
    and an intercept column), extreme magnitudes included; the squared loss makes the coefficients huge."""
    design = as_design(_extreme_csr())
    scale = np.array([1.0, 1e-300, 0.5, 1.0, 1.0, 1e-299])
    design = design.with_row_scale(scale, design.x_norms * scale)
    if intercept:
        design = design.with_intercept(intercept)
    y = np.array([1e300, -1e300, 5.0, 1e200, -3.0, 1.0])
    for w in (np.full(design.d, 1e10), np.full(design.d, -3.0), np.array([1e300, -1e300, 1.0] + [2.0] * (design.d - 3))):
        for clip in (1.0, 1e-5, 1e250):
            assert _worst_contribution(design.rows, design.row_norms, y, w, clip, loss_kind=2) <= 1.0


def test_contribution_check_catches_a_row_norm_without_the_intercept():
    """Planted bug: row norms that leave out the intercept column (‖x‖ instead of ‖(x, c)‖) let a record's
    gradient exceed the clip — the replay above sees it."""
    design = as_design(sp.csr_matrix(XS)).with_intercept(2.0)
    w = np.full(design.d, 5.0)
    y = np.full(N, -50.0)
    assert _worst_contribution(design.rows, design.row_norms, y, w, 1.0, loss_kind=2) <= 1.0
    assert _worst_contribution(design.rows, design.x_norms, y, w, 1.0, loss_kind=2) > 1.5


def test_softmax_per_record_contribution_never_exceeds_the_clip():
    """Softmax: the whole k × d gradient matrix of one record, clipped in coefficient space, has exact
    Frobenius norm ≤ C (extreme rows, huge weights, a virtual intercept); with the norms of the rows
    without the intercept (planted bug) it exceeds C."""
    k = 4
    design = as_design(_extreme_csr()).with_intercept(1.0)
    labels = np.array([0.0, 3.0, 1.0, 2.0, 0.0, 3.0])
    out = np.empty(k * design.d)
    for W in (np.linspace(-1e3, 1e3, k * design.d), np.full(k * design.d, 1e300), np.zeros(k * design.d)):
        for clip in (1.0, 1e-3):
            for i in range(design.n):
                softmax_clipped_sum_kernel(design.rows, labels, design.row_norms, W, k, np.array([i]), True, 1, clip,
                                           out)
                assert _exact_norm(out) <= clip
    wide = as_design(sp.csr_matrix(XS)).with_intercept(3.0)
    W = np.linspace(-2.0, 2.0, k * wide.d)
    lab = np.arange(N) % k * 1.0
    worst = 0.0
    out = np.empty(k * wide.d)
    for i in range(N):
        softmax_clipped_sum_kernel(wide.rows, lab, wide.x_norms, W, k, np.array([i]), True, 1, 0.1, out)
        worst = max(worst, float(_exact_norm(out) / 0.1))
    assert worst > 1.5
    with pytest.raises(ValueError, match="k\\*d"):
        softmax_clipped_sum_kernel(wide.rows, lab, wide.row_norms, W, k, np.array([0]), True, 1, 0.1, out[:-1])


# --------------------------------------------------------------------------------------- memory


def test_default_fit_allocates_no_n_by_d_temporary():
    """The default estimator path (validation, row norms, intercept, Newton) and DP-SGD allocate far less than
    the data in NumPy (tracemalloc); AdaSSP, which copies X with its intercept column for its dense sufficient
    statistics, exceeds the same threshold — the measurement can fail."""
    from algorithms import DPLinearRegression

    gen = np.random.default_rng(1)
    X = gen.standard_normal((20_000, 100)) / 12.0
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X[:, 0] > 0).astype(int)
    fits = {"objective_perturbation": lambda A, b: DPLogisticRegression(solver="objective_perturbation", classes=[0, 1],
                                                                        random_state=0).fit(A, b),
            "dp_sgd": lambda A, b: DPLogisticRegression(solver="dp_sgd", classes=[0, 1], random_state=0).fit(A, b),
            "adassp": lambda A, b: DPLinearRegression(solver="adassp", target_bound=1.0, random_state=0).fit(A, b)}
    peaks = {}
    for name, fit in fits.items():
        fit(X, y)  # compile / load the kernels outside the measurement (the solver's path depends on n)
        tracemalloc.start()
        fit(X, y)
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks["objective_perturbation"] < 0.25 * X.nbytes and peaks["dp_sgd"] < 0.25 * X.nbytes, peaks
    assert peaks["adassp"] > X.nbytes, peaks


def test_validation_makes_no_copy_of_a_float64_c_array_or_canonical_csr():
    X = np.ascontiguousarray(XS)
    assert as_design(X).rows is X
    design = as_design(CSR)
    assert design.rows.data is CSR.data and design.rows.indices is CSR.indices
    assert design.sparse and design.n == N and design.d == D


# ------------------------------------------------------------------------------------- hostile CSR


def test_hostile_sparse_input():
    bad = CSR.copy()
    bad.data[3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        dp_gd(bad, YS, epsilon=1.0, data_norm_bound=1.0)
    with pytest.raises(ValueError, match="Complex"):
        dp_gd(CSR.astype(complex), YS, epsilon=1.0, data_norm_bound=1.0)
    with pytest.raises(ValueError, match="0 sample"):
        dp_gd(sp.csr_matrix((0, 3)), [], epsilon=1.0, data_norm_bound=1.0)
    dup = sp.csr_matrix((np.array([0.3, 0.4]), np.array([1, 1]), np.array([0, 2])), shape=(1, 3))
    assert not dup.has_canonical_format
    assert as_design(dup).row_norms[0] == pytest.approx(0.7)  # duplicates summed, not √(0.3² + 0.4²)
    assert dup.data.shape == (2,)  # the caller's matrix is left alone
    for other in (CSR.tocsc(), CSR.tocoo(), sp.csr_array(CSR)):
        np.testing.assert_array_equal(as_design(other).row_norms, as_design(CSR).row_norms)
    wide = sp.csr_matrix((np.ones(2), np.array([0, 10**6]), np.array([0, 1, 2])), shape=(2, 10**6 + 1))
    assert 8 * 2 * (10**6 + 1) > 0 and as_design(wide).d == 10**6 + 1
    with pytest.raises(ValueError, match="MAX_DENSE_BYTES"):  # a dense-only solver refuses the huge copy
        prepare_data(sp.csr_matrix((1, MAX_DENSE_BYTES // 8 + 1)), [1.0], "classification")


# -------------------------------------------------------------------------------------- multiclass


def _three_classes(n=300, seed=3):
    gen = np.random.default_rng(seed)
    centres = np.array([[0.6, 0.0, 0.0], [-0.3, 0.5, 0.0], [-0.3, -0.5, 0.0]])
    y = gen.integers(0, 3, n)
    X = centres[y] + 0.15 * gen.standard_normal((n, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, y


def test_softmax_event_is_the_binary_event_and_noise_off_matches_sklearn():
    """The softmax fit releases one clipped gradient matrix per step: its event is the binary run's
    (same σ, no budget split); with ε = inf it is scikit-learn's multinomial logistic regression."""
    from sklearn.linear_model import LogisticRegression

    X, y = _three_classes()
    soft = dp_gd(X, y, classes=3, epsilon=1.0, data_norm_bound=1.0, steps=20, rng=0)
    binary = dp_gd(X, (y == 0) * 1.0, epsilon=1.0, data_norm_bound=1.0, steps=20, rng=0)
    assert soft.weights.shape == (3, 3) and repr(soft.event) == repr(binary.event)
    assert soft.noise_multiplier == binary.noise_multiplier
    alpha = 0.01
    exact = dp_gd(X, y, classes=3, epsilon=math.inf, alpha=alpha, data_norm_bound=1.0).weights
    sk = LogisticRegression(C=1.0 / (len(y) * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(exact, sk.coef_, atol=1e-6)
    with pytest.raises(ValueError, match="class codes"):
        dp_gd(X, y + 0.5, classes=3, epsilon=1.0, data_norm_bound=1.0)
    with pytest.raises(ValueError, match="logistic"):
        dp_gd(X, y, classes=3, loss="huber", epsilon=1.0, data_norm_bound=1.0)


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_one_vs_rest_composes_its_k_fits_in_one_dpcore_event(delta):
    X, y = _three_classes()
    labels = np.array(["a", "b", "c"])[y]
    m = DPLogisticRegression(solver="objective_perturbation", classes=["a", "b", "c"], epsilon=1.0, delta=delta,
                             multi_class="ovr", random_state=0).fit(X, labels)
    assert m.multi_class_ == "ovr" and m.coef_.shape == (3, 3) and m.intercept_.shape == (3,)
    eps_k, delta_k = ovr_budget(1.0, delta, 3)
    assert m.privacy_event_ == SelfComposedEvent(
        ApproxDpEvent(eps_k, delta_k, "replace_one") if delta else m.privacy_event_.event, 3)
    if delta:
        again = dpcore.get_epsilon(m.privacy_event_, delta, accountant="composition")
        assert m.privacy_.epsilon == again.epsilon <= 1.0 and eps_k > 1.0 / 3.0  # better than basic composition
    else:
        assert m.privacy_.delta == 0.0 and 3 * eps_k <= 1.0
    assert set(m.predict(X)) <= {"a", "b", "c"} and m.score(X, labels) > 0.6
    np.testing.assert_allclose(m.predict_proba(X).sum(axis=1), 1.0)


def test_one_vs_rest_fits_draw_independent_noise_from_one_seed():
    """An int seed must not give the k binary fits the same noise (correlated noise breaks composition):
    each class's objective noise differs."""
    X, y = _three_classes()
    m = DPLogisticRegression(solver="objective_perturbation", classes=[0, 1, 2], random_state=4, multi_class="ovr",
                             keep_diagnostics=True).fit(X, y)
    noises = [r.details["perturbed_grad_norm"] for r in m.result_]
    b = [r.weights for r in m.result_]
    assert len({round(v, 12) for v in noises}) == 3 and not np.allclose(b[0], b[1])


def test_multinomial_estimator_and_its_choice():
    """multi_class='auto' fits k ≥ 3 classes by softmax DP-GD, with the default solver='auto' and with a solver
    without a softmax kernel (solver_ says so); dp_gd's softmax fit of CSR equals the dense one."""
    X, y = _three_classes()
    auto = DPLogisticRegression(classes=[0, 1, 2], random_state=0).fit(X, y)
    assert (auto.solver, auto.solver_, auto.multi_class_) == ("auto", "dp_gd", "multinomial")
    op = DPLogisticRegression(solver="objective_perturbation", classes=[0, 1, 2], random_state=0).fit(X, y)
    assert (op.solver_, op.multi_class_) == ("dp_gd", "multinomial")
    binary = DPLogisticRegression(solver="objective_perturbation", classes=[0, 1], random_state=0).fit(X, y % 2)
    assert (binary.solver_, binary.multi_class_) == ("objective_perturbation", "binary")
    with pytest.raises(ValueError, match="concrete solver"):
        DPLogisticRegression(classes=[0, 1, 2], multi_class="ovr").fit(X, y)
    m = DPLogisticRegression(solver="dp_gd", classes=[0, 1, 2], epsilon=2.0, random_state=0).fit(X, y)
    assert m.multi_class_ == "multinomial" and m.coef_.shape == (3, 3) and m.privacy_.epsilon <= 2.0
    assert m.score(X, y) > 0.8
    proba = m.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.argmax(proba, axis=1), np.argmax(m.decision_function(X), axis=1))
    sparse = DPLogisticRegression(solver="dp_gd", classes=[0, 1, 2], epsilon=2.0, random_state=0).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, m.coef_, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------- penalty / rows


def test_l1_penalty_gives_zeros_and_the_same_privacy():
    l2 = DPLogisticRegression(solver="dp_gd", classes=[-1, 1], epsilon=1.0, random_state=0).fit(XS, YS)
    l1 = DPLogisticRegression(solver="dp_gd", classes=[-1, 1], epsilon=1.0, penalty="l1", alpha=0.1,
                              random_state=0).fit(XS, YS)
    assert np.sum(l1.coef_ == 0.0) >= 2 and not np.any(l2.coef_ == 0.0)  # fixed seed: soft-thresholded zeros
    assert l1.privacy_.epsilon == l2.privacy_.epsilon
    with pytest.raises(ValueError, match="l1 prox"):
        DPLogisticRegression(solver="objective_perturbation", penalty="l1", classes=[-1, 1]).fit(XS, YS)


def test_rows_normalised_to_the_bound_are_accepted_without_a_copy_and_predict_alike():
    """Rows normalised to norm R in float (some computed a few ulps above R) are mapped to R by a per-row
    scale in fit and predict; the model equals the one fitted on the explicitly rescaled rows."""
    X = XS / np.linalg.norm(XS, axis=1)[:, None]
    X[::3] *= 1.0 + 4e-16  # a few ulps above the bound, as float normalisation leaves some rows
    design = as_design(X)
    assert np.any(design.x_norms > 1.0) and np.all(design.x_norms <= 1.0 + 1e-6)
    m = DPLogisticRegression(classes=[-1, 1], random_state=0).fit(X, YS)
    over = np.flatnonzero(design.x_norms > 1.0)
    fixed = X.copy()
    fixed[over] *= (1.0 / design.x_norms[over])[:, None]
    ref = DPLogisticRegression(classes=[-1, 1], random_state=0).fit(fixed, YS)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(fixed), rtol=1e-9, atol=1e-10)


def test_dense_rows_layout_is_a_namedtuple_of_the_given_array():
    design = as_design(XS).with_intercept(1.0)
    assert isinstance(design.rows, DenseRows) and design.rows.X is XS and design.d == D + 1
    design = as_design(CSR).with_intercept(1.0)
    assert isinstance(design.rows, CSRRows) and design.rows.shape == (N, D + 1)
