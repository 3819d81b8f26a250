"""The Python examples of docs/samplers.md run as written (issue 23 review, item 6: the "Using it"
example failed with UnsupportedEventError at dp_sgd's default accountant)."""

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "samplers.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_samplers_doc_python_block_runs(code):
    exec(compile(code, str(DOC), "exec"), {})


@pytest.mark.parametrize("make", ["BallsInBinsSampler(300, 10)", "TruncatedPoissonSampler(300, 0.1, 36)",
                                  "WithReplacementSampler(300, 30)", "ShuffleSampler(300, 10)",
                                  "FixedSizeSampler(300, 30)", "PoissonSampler(300, 0.1)"])
def test_dp_sgd_runs_every_sampler_at_its_default_accountant(make):
    from algorithms import dp_sgd
    from algorithms.synthetic import make_classification
    from dpcore import get_epsilon, sampling

    X, y, _ = make_classification(300, 3, seed=0)
    sampler = eval(make, vars(sampling))
    res = dp_sgd(X, y, epsilon=2.0, delta=1e-5, sampling=sampler, epochs=2, data_norm_bound=1.0)
    assert res.privacy.epsilon <= 2.0
    assert get_epsilon(res.event, 1e-5, accountant=res.privacy.accountant).epsilon <= 2.0
