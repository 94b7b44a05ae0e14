"""orbitlaw_sr: orbitlaw's symbolic-regression engine (`orbitlaw sr`) called from Python on NumPy arrays."""
from .expression import evaluate
from .regressor import OrbitlawNotFoundError, SymbolicRegressor, find_binary

__all__ = ["SymbolicRegressor", "OrbitlawNotFoundError", "find_binary", "evaluate"]
