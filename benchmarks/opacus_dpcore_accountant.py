"""Opacus with dpcore's accountant, told which sampler the data loader really uses.

    python benchmarks/opacus_dpcore_accountant.py

Trains a small logistic model with Opacus 1.6 on synthetic data twice: with a shuffling
DataLoader (``poisson_sampling=False``) and with Opacus's Poisson loader. Opacus's own accountant
reports the Poisson ε for both; :class:`dpcore.integrations.opacus.DpcoreAccountant` reports the
valid ε of the sampler that ran (for shuffling: no amplification, with the lower bound beside it).
Skips with a message where torch / Opacus are not installed.
"""

import warnings

from dpcore.integrations.opacus import DpcoreAccountant
from dpcore.shuffle_bounds import shuffle_bounds

try:
    import torch
    from opacus import PrivacyEngine
    from opacus.accountants import RDPAccountant
except ImportError:  # pragma: no cover
    print("skipped: torch and opacus are not installed (pip install 'dpcore[opacus]' torch)")
    raise SystemExit(0)

warnings.filterwarnings("ignore")
N, D, BATCH, EPOCHS, SIGMA, DELTA = 2000, 10, 100, 3, 1.0, 1e-5


def train(poisson: bool, sampling: str) -> tuple:
    torch.manual_seed(0)
    X = torch.randn(N, D)
    y = (X[:, 0] > 0).long()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=BATCH, shuffle=True)
    model = torch.nn.Linear(D, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    engine = PrivacyEngine()
    engine.accountant = DpcoreAccountant(sampling)  # told which sampler the loader uses; before make_private
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=SIGMA, max_grad_norm=1.0,
                                                   poisson_sampling=poisson)
    for _ in range(EPOCHS):
        for xb, yb in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
    theirs = RDPAccountant()  # Opacus's own accountant on the same steps: it assumes Poisson sampling
    theirs.history = list(engine.accountant.history)
    return theirs.get_epsilon(DELTA), engine.get_epsilon(DELTA), len(engine.accountant)


if __name__ == "__main__":
    print(f"N={N}, batch {BATCH}, {EPOCHS} epochs, sigma={SIGMA}, delta={DELTA}")
    print(f"{'loader':<22}{'opacus (assumes Poisson)':>26}{'dpcore (sampler that ran)':>28}{'steps':>8}")
    for poisson, sampling in ((True, "poisson"), (False, "shuffle")):
        theirs, ours, steps = train(poisson, sampling)
        print(f"{sampling:<22}{theirs:>26.4f}{ours:>28.4f}{steps:>8}")
    b = shuffle_bounds(SIGMA / 2, N // BATCH, EPOCHS, DELTA)  # replace_one: sigma relative to 2C
    print(f"shuffle: the true epsilon is at least {b.lower:.4f} (Chua et al. 2024 lower bound); "
          f"valid upper {b.upper:.4f}; Poisson number {b.poisson:.4f} is not a guarantee")
