"""playhall-protocol's C part, the optional ``_speedups`` (a C twin of packing a view diff; the
pure Python reference is used where it cannot be compiled). Everything else is in
pyproject.toml. The root's setup.py builds the same module for the server's distribution."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("playhall_protocol._speedups", ["playhall_protocol/_speedups.c"], optional=True)
    ]
)
