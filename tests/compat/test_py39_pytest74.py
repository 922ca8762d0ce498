"""The compatibility matrix on Python 3.9 and pytest 7.4, the oldest supported (the checks are in compat_matrix.py)."""

from tests.compat.compat_matrix import CompatMatrix
from tests.compat.conftest import COMBOS


class TestPy39Pytest74(CompatMatrix):
    COMBO = COMBOS[0]
