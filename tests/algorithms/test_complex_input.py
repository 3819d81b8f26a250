"""Complex and string data are refused by every solver and estimator (issue 22 item 5): the one
place that validates (X, y) is algorithms/_data.py, through dpcore's check_real_array."""

import inspect

import numpy as np
import pytest

from algorithms import DPLinearRegression, DPLogisticRegression
from algorithms.estimators import SOLVERS

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 3))
X /= np.linalg.norm(X, axis=1, keepdims=True)
Y = np.where(RNG.random(20) < 0.5, -1.0, 1.0)
ARGS = {"epsilon": 1.0, "delta": 1e-5, "p": 1.5}


@pytest.mark.parametrize("name", sorted(SOLVERS))
@pytest.mark.parametrize("which, data", [
    ("X", (X + 1j, Y)),  # np.asarray(X, float) would drop the imaginary part, with only a warning
    ("y", (X, Y + 1j)),
    ("X", (X.astype(str), Y)),  # and would parse strings
])
def test_solvers_refuse_complex_and_string_data(name, which, data):
    solver = SOLVERS[name]
    kwargs = {k: v for k, v in ARGS.items() if k in inspect.signature(solver).parameters}
    with pytest.raises(ValueError, match=f"^{which} must contain only real numbers"):
        solver(*data, **kwargs)


def test_estimators_refuse_complex_data():
    with pytest.raises(ValueError, match="^X must contain only real numbers; got complex"):
        DPLogisticRegression(classes=[-1.0, 1.0]).fit(X + 1j, Y)
    with pytest.raises(ValueError, match="^X must contain only real numbers; got complex"):
        DPLinearRegression().fit(X + 1j, Y)
    with pytest.raises(ValueError, match="^y must contain only real numbers; got complex"):
        DPLinearRegression().fit(X, Y + 1j)


def test_a_complex_initial_point_is_refused():
    with pytest.raises(ValueError, match="^w0 must contain only real numbers"):
        SOLVERS["dp_gd"](X, Y, epsilon=1.0, data_norm_bound=1.0, steps=2, w0=np.zeros(3) + 1j)
