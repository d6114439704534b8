"""Make tests/gnubg_oracle.py importable from the rules tests, whatever the package layout."""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
