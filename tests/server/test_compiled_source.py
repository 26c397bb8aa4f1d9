"""The modules the opt-in build compiles with mypyc (``COMPILED`` in setup.py) never suspend while
they handle an exception: no ``await``, ``async with``, ``async for`` or ``yield`` inside an
``except`` or a ``finally`` block. Compiled, a coroutine that does leaves the exception it
handles as the thread's current one (every later exception in the process chains to it, and the
chain never ends), and with several such coroutines suspended at once the interpreter can crash
(docs/operations.md, "The compiled build"; tests/server/test_exception_state.py shows the leak
through the server). The source is read, so this holds in either build."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUSPENDING = (ast.Await, ast.AsyncWith, ast.AsyncFor, ast.Yield, ast.YieldFrom)


def compiled_modules() -> list[Path]:
    """The paths setup.py's ``COMPILED`` names, read from its source (importing setup.py would
    run setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMPILED" for t in node.targets
        ):
            groups: dict[str, list[str]] = ast.literal_eval(node.value)
            return [ROOT / path for paths in groups.values() for path in paths]
    raise AssertionError("setup.py has no COMPILED")


def suspensions_while_handling(source: str) -> list[int]:
    """The lines where ``source`` suspends inside an ``except`` or ``finally`` block."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Try | ast.TryStar):
            continue
        blocks = [handler.body for handler in node.handlers] + [node.finalbody]
        for block in blocks:
            found += [
                inner.lineno
                for statement in block
                for inner in ast.walk(statement)
                if isinstance(inner, SUSPENDING)
            ]
    return sorted(found)


def test_the_check_finds_each_way_of_suspending_in_a_handler() -> None:
    source = """
async def f(lock, items):
    try:
        await g()
    except KeyError:
        await g()
    except ValueError:
        async with lock:
            pass
    finally:
        async for item in items:
            pass

def h():
    try:
        pass
    finally:
        yield 1

async def fine():
    failure = None
    try:
        await g()
    except KeyError as exc:
        failure = exc
    await g()
    if failure is not None:
        raise failure
"""
    assert suspensions_while_handling(source) == [6, 8, 11, 18]


def test_no_compiled_module_suspends_while_it_handles_an_exception() -> None:
    modules = compiled_modules()
    assert len(modules) > 10 and all(path.is_file() for path in modules), modules
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in modules
        for line in suspensions_while_handling(path.read_text())
    ]
    assert found == [], found
