"""The compatibility matrix on Python 3.13 and pytest 9.2, the newest (the checks are in compat_matrix.py)."""

from tests.compat.compat_matrix import CompatMatrix
from tests.compat.conftest import COMBOS


class TestPy313Pytest92(CompatMatrix):
    COMBO = COMBOS[3]
