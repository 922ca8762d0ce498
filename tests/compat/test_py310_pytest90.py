"""The compatibility matrix on Python 3.10 and pytest 9.0, the first with built-in subtests."""

from tests.compat.compat_matrix import CompatMatrix
from tests.compat.conftest import COMBOS


class TestPy310Pytest90(CompatMatrix):
    COMBO = COMBOS[2]
