"""Loaded into plain pytest by the oracle (`-p pytest_mcp_oracle_plugin`): dumps each item's location.

pytest's `item.location` is the ground truth for where a test is defined; the oracle turns
its 0-based line into the 1-based line CollectedTest promises.
"""

import json
import os


def pytest_collection_finish(session):
    target = os.environ.get("ORACLE_PLUGIN_DUMP")
    if not target:
        return
    items = []
    for item in session.items:
        path, line, _ = item.location
        if line is None:
            continue
        items.append({"nodeid": item.nodeid, "file": path, "line": line})
    with open(target, "w", encoding="utf-8") as fh:
        json.dump(items, fh)
