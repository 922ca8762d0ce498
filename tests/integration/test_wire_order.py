"""An answer's bytes do not depend on the process: keys come in the models' order, whatever the hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

DUMP = """
import json
from pytest_mcp.domain.models import RunProgress, RunResult, Summary
print(json.dumps(RunResult(status="running", run_id="r" * 32, progress=RunProgress(), exit_code=None,
                           summary=Summary()).wire()))
"""


def test_the_always_present_fields_come_in_field_order_under_every_hash_seed() -> None:
    answers = {
        subprocess.run(
            [sys.executable, "-c", DUMP],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(6)
    }
    assert len(answers) == 1, answers
    summary_keys = list(json.loads(answers.pop())["summary"])
    assert summary_keys[:4] == ["total", "passed", "failed", "skipped"]
