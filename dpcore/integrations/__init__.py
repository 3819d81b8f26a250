"""Bridges to other libraries' interfaces; none of them is imported by dpcore itself.

* :mod:`dpcore.integrations.opacus` — :class:`~dpcore.integrations.opacus.DpcoreAccountant`, an
  accountant duck-typed to Opacus's ``IAccountant`` (no torch import), told which sampler the
  data loader really uses;
* :mod:`dpcore.integrations.dp_accounting` — :func:`~dpcore.integrations.dp_accounting.from_dp_event`,
  dp_accounting ``DpEvent`` trees to dpcore events (works on the objects; dp_accounting itself
  is only needed to build them: the optional extra ``dp-accounting``).
"""
