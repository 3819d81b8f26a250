"""Hypothesis profiles for the suite.

``reproducible`` (the default): every property test draws the same examples on every run (``derandomize``), so a
clean checkout that passed once passes again — CI's verdict does not depend on which random examples a run drew.
``explore``: fresh random examples on every run (hypothesis' own default), for looking for new counterexamples:
``python -m pytest --hypothesis-profile=explore``. A counterexample found that way is pinned with ``@example``
next to the test it broke (e.g. tests/mechanisms/test_extreme_parameters.py).
"""

from hypothesis import settings

settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)


def pytest_configure(config):
    """``reproducible`` unless ``--hypothesis-profile`` names another profile."""
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("reproducible")
