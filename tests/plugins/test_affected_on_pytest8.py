"""affected=true on the newest pytest 8 (the cases and checks are in affected.py)."""

import pytest

from tests.plugins.affected import Affected

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class TestAffectedOnPytest8(Affected):
    environment = "pytest8"
