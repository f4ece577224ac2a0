"""The code blocks of docs/reference/kernels.md marked ``python tested`` run as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "kernels.md"


def test_marked_blocks_run():
    blocks = re.findall(r"^```python tested\n(.*?)^```", DOC.read_text(), re.S | re.M)
    assert blocks, "docs/reference/kernels.md has no block marked python tested"
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {})
