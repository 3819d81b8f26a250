"""algorithms — private convex ERM solvers from the papers, their building blocks, and
scikit-learn style estimators.

Objective convention everywhere: F(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + r(w), with the L2 part of r
written (alpha/2)‖w‖². Every solver returns a :class:`SolverResult` whose ``privacy`` was computed by
dpcore from the ``event`` describing what the solver ran.

Solvers (one function each; estimator ``solver=`` names are the same strings):

* gradient perturbation — :func:`dp_gd`, :func:`dp_sgd`, :func:`dp_svrg`, :func:`dp_svrg_pp`,
  :func:`dp_accmd` (wang-ye-xu-2017; Abadi et al. / Bassily et al.);
* output perturbation — :func:`output_perturbation_gd` (Zhang, Zheng, Mou, Wang 2017, Alg. 1);
* objective perturbation — :func:`objective_perturbation` (lecture14 Alg. 1, Chaudhuri et al. 2011),
  :func:`approximate_minima_perturbation` (Iyengar et al. 2019),
  :func:`approx_objective_perturbation` (Su, Zhao, Wang Alg. 1 / 2);
* non-convex objectives — :func:`dp_srm` (wang-jayaraman-evans-gu Alg. 1), :func:`rrpsgd`
  (Zhang, Zheng, Mou, Wang 2017, Alg. 2), and ``dp_gd(output="random")`` (wang-ye-xu §6.2); every
  first-order solver takes ``penalty="nonconvex"`` (λΣⱼwⱼ²/(1 + wⱼ²), λ = ``alpha``).
* ℓp geometry (Su, Zhao, Wang §5) — :func:`noisy_mirror_descent` (Alg. 3), :func:`phased_dp_sgd`
  (Alg. 6), :func:`batched_truncated_mirror_descent` (Alg. 7), :func:`shuffled_truncated_mirror_descent`
  (Alg. 4), all taking ``p=``.

Estimators: :class:`DPLogisticRegression` (two or more classes: softmax or one-vs-rest,
:mod:`algorithms.multiclass`), :class:`DPHuberRegressor`, :class:`DPLinearRegression`,
:class:`DPMLPClassifier` (one-hidden-layer network; DP-SGD, DP-GD, DP-SRM or RRPSGD); scikit-learn's
``check_estimator`` passes for each.

Data in the shapes users bring (:mod:`algorithms.rows`, :mod:`algorithms._data`): X is validated once; sparse
input stays CSR for the solvers whose kernels read rows through :func:`algorithms.rows.row_dot` /
:func:`algorithms.rows.row_axpy`, and the estimators' intercept column and row map are read without copying X.
"""

from .approx_objective_perturbation import approx_objective_perturbation
from .approximate_minima_perturbation import approximate_minima_perturbation
from .constraints import get_constraint
from .dp_accmd import dp_accmd
from .dp_gd import dp_gd
from .dp_sgd import dp_sgd
from .dp_srm import dp_srm
from .dp_svrg import dp_svrg, dp_svrg_pp
from .estimators import SOLVERS, DPHuberRegressor, DPLinearRegression, DPLogisticRegression
from .mlp import DPMLPClassifier
from .losses import get_loss
from .noisy_mirror_descent import noisy_mirror_descent
from .objective_perturbation import objective_perturbation
from .output_perturbation import output_perturbation_gd
from .phased_dp_sgd import phased_dp_sgd
from .regularizers import get_regularizer
from .rrpsgd import rrpsgd
from .result import SolverResult
from .truncated_mirror_descent import batched_truncated_mirror_descent, shuffled_truncated_mirror_descent
from .label_set import PrivacyLeakWarning
from .seeding import DeterministicSeedWarning

__all__ = [
    "dp_gd",
    "dp_sgd",
    "dp_svrg",
    "dp_svrg_pp",
    "dp_accmd",
    "output_perturbation_gd",
    "objective_perturbation",
    "approximate_minima_perturbation",
    "approx_objective_perturbation",
    "dp_srm",
    "rrpsgd",
    "noisy_mirror_descent",
    "phased_dp_sgd",
    "batched_truncated_mirror_descent",
    "shuffled_truncated_mirror_descent",
    "DPLogisticRegression",
    "DPHuberRegressor",
    "DPLinearRegression",
    "DPMLPClassifier",
    "SOLVERS",
    "SolverResult",
    "DeterministicSeedWarning",
    "PrivacyLeakWarning",
    "get_loss",
    "get_regularizer",
    "get_constraint",
]
