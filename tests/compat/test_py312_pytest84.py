"""The compatibility matrix on Python 3.12 and pytest 8.4, the last pytest 8 (the checks are in compat_matrix.py)."""

from tests.compat.compat_matrix import CompatMatrix
from tests.compat.conftest import COMBOS


class TestPy312Pytest84(CompatMatrix):
    COMBO = COMBOS[1]
