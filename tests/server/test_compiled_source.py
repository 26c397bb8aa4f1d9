"""Two rules of the modules the opt-in build compiles with mypyc (``COMPILED`` in setup.py;
docs/operations.md, "The compiled build"). The source is read, so they hold in either build.

- They never suspend while they handle an exception: no ``await``, ``async with``, ``async for``
  or ``yield`` inside an ``except`` or a ``finally`` block. Compiled, a coroutine that does
  leaves the exception it handles as the thread's current one (every later exception in the
  process chains to it, and the chain never ends), and with several such coroutines suspended
  at once the interpreter can crash (tests/server/test_exception_state.py shows the leak
  through the server).
- A name bound by ``except ... as`` clauses of one function is bound to one exception type.
  Compiled, a name has one type in a function, the first clause's: ``except RoomError as exc``
  then ``except Exception as exc`` raises TypeError ("RoomError object expected; got
  ConnectionError") when the second clause is reached, and the handler never runs."""

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


def names_of_two_types(source: str) -> list[str]:
    """``line name`` for each name that ``except ... as`` clauses of one function bind to
    exceptions of different types (at the first clause of a type other than the name's
    first)."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first: dict[str, str] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.ExceptHandler) and node.name is not None:
                caught = ast.unparse(node.type) if node.type is not None else "BaseException"
                if first.setdefault(node.name, caught) != caught:
                    found.append(f"{node.lineno} {node.name}")
    return sorted(found)


def test_the_check_finds_a_name_bound_to_two_exception_types() -> None:
    source = """
async def f():
    try:
        await g()
    except KeyError as exc:
        pass
    except Exception as exc:
        pass
    try:
        pass
    except KeyError as exc:
        pass

async def fine():
    try:
        await g()
    except KeyError as exc:
        pass
    except Exception as failure:
        pass
"""
    assert names_of_two_types(source) == ["7 exc"]


def test_no_compiled_module_binds_one_name_to_two_exception_types() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in compiled_modules()
        for line in names_of_two_types(path.read_text())
    ]
    assert found == [], found
