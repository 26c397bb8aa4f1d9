"""The build backend: setuptools' own, plus the opt-in compiled build (see setup.py).

With ``PLAYHALL_COMPILE=1`` a wheel build also requires mypy (it ships mypyc); without it the
requirements are exactly setuptools'. An editable install is never compiled: its compiled
modules would sit in the source tree beside the .py files and shadow every later edit.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every hook not changed here)

#: What compiling needs besides setuptools (mypyc is part of mypy).
COMPILE_REQUIRES = ["mypy>=1.10"]


def _compiling() -> bool:
    return os.environ.get("PLAYHALL_COMPILE") == "1"


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    if not _compiling():
        return _setuptools.get_requires_for_build_wheel(config_settings)
    # setuptools runs setup.py to collect the requirements, before mypy is there: as pure.
    del os.environ["PLAYHALL_COMPILE"]
    try:
        requires = _setuptools.get_requires_for_build_wheel(config_settings)
    finally:
        os.environ["PLAYHALL_COMPILE"] = "1"
    return [*requires, *COMPILE_REQUIRES]


def _refuse_compiled_editable() -> None:
    if _compiling():
        raise RuntimeError(
            "PLAYHALL_COMPILE=1 is for a regular install (pip install .), not an editable one"
        )


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    _refuse_compiled_editable()
    return _setuptools.get_requires_for_build_editable(config_settings)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _refuse_compiled_editable()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
