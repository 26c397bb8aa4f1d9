"""The C extensions in tests: where they were not built, the tests that need them skip.

Every install builds the C extensions where a C compiler is at hand and runs their Python
references where not, so the suite must run on a machine without a compiler too: the tests of a
missing extension are skipped with a reason saying so. CI builds them, so under ``CI=true`` a
missing extension is an error, never a skip.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def missing_reason(name: str) -> str:
    return f"the C extension {name} is not built (no C compiler at install time)"


def c_extension(name: str) -> ModuleType | None:
    """The extension module ``name``, or None where it was not built (an ImportError under
    CI=true, where it must be)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI"):
            raise
        return None


def require_c_extension(name: str) -> ModuleType:
    """The extension module ``name``; skips the calling test module where it was not built."""
    module = c_extension(name)
    if module is None:
        pytest.skip(missing_reason(name), allow_module_level=True)
    return module


def needs(module: ModuleType | None, name: str) -> pytest.MarkDecorator:
    """Mark a test that needs the extension ``module`` (as returned by :func:`c_extension`)."""
    return pytest.mark.skipif(module is None, reason=missing_reason(name))
