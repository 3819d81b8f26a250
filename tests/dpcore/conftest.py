"""Shared fixtures of the dpcore tests."""

import pytest


@pytest.fixture
def call_counter(monkeypatch):
    """``count(module, name)`` wraps ``module.name`` for the test and returns a dict whose ``"n"`` is
    the number of calls made since (e.g. the PLD's characteristic-function windows or levels)."""

    def count(module, name):
        calls = {"n": 0}
        real = getattr(module, name)

        def counted(*args, **kw):
            calls["n"] += 1
            return real(*args, **kw)

        monkeypatch.setattr(module, name, counted)
        return calls

    return count
