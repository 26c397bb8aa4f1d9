"""Two commits side by side, as a change to the move path is measured (docs/benchmarks.md,
"Before and after"): the section's table, in markdown, on stdout.

    python bench/compare.py [--base 8487996] [--head HEAD] [--rounds 3] [--seconds 15]

Each commit is checked out in a clone of its own (``git clone --shared``: this repository's
objects, read only) and built twice with this Python (it needs mypy: the test extras): compiled
(the commit's own bench/compiled_tree.sh) and pure (the clone itself with the C speedups built
in place, as the README's install has them). Every copy is measured by its own bench/moves.py:

- moves/s and p99: ``--rounds`` rounds of one compiled R = 500 run per commit, ``--seconds``
  after ``--warmup``, which commit goes first alternating from round to round; the median of
  each commit's runs (its runs in brackets).
- server instructions per move: ``--counted`` callgrind runs (R = 20, 40 s) of each build of
  each commit; the median.
- lines of C: ``git ls-files '*.c' | xargs wc -l`` at the commit.
- duplicated Python: ``duplicates --repo <clone> --most 200``: the pairs whose two sides are
  both Python files, and the lines of their first sides.

The trees are built in ``--work`` (default: a temporary folder, removed at the end); a tree
already there for the same commit is used again. Progress goes to stderr, every run's numbers
to ``--json``. moves/s and p99 move with the machine's load; instruction counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def build(sha: str, work: Path) -> dict[str, Path]:
    """The commit's two builds in ``work``, made if not there yet: ``pure`` (its clone, with the
    C speedups built in place, as the README's install has them) and ``compiled`` (a copy made
    by the commit's own bench/compiled_tree.sh). Each tree runs its own bench/moves.py."""
    side = work / sha[:12]
    source, compiled = side / "source", side / "compiled"
    env = {k: v for k, v in os.environ.items() if k != "PLAYHALL_COMPILE"}
    if not source.exists():
        log(f"{sha[:9]}: clone")
        git("clone", "-q", "--shared", "--no-checkout", str(ROOT), str(source))
        git("checkout", "-q", "--detach", sha, cwd=source)
    if not (side / "built").exists():  # none yet, or a build that did not finish
        shutil.rmtree(compiled, ignore_errors=True)
        log(f"{sha[:9]}: compiled build")
        subprocess.run([str(source / "bench/compiled_tree.sh"), str(compiled), sys.executable],
                       check=True, env=env, capture_output=True)
        log(f"{sha[:9]}: pure build")
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                       cwd=source, check=True, env=env, capture_output=True)
        (side / "built").touch()
    return {"compiled": compiled, "pure": source}


def prepare(sha: str, work: Path) -> dict[str, Any]:
    """The commit's two builds (``build``) and the counts read from its source."""
    trees = build(sha, work)
    source = trees["pure"]
    c_files = git("ls-files", "*.c", cwd=source).split()
    c_lines = sum((source / f).read_bytes().count(b"\n") for f in c_files)
    found = subprocess.run(["duplicates", "--repo", str(source), "--most", "200",
                            "--seconds", "120"], capture_output=True, text=True).stdout
    pairs = re.findall(r"^D\d+ (\S+?\.py):(\d+)-(\d+) ~ \S+?\.py:\d+-\d+", found, re.M)
    return {"sha": sha, "trees": trees, "c_lines": c_lines,
            "dup_pairs": len(pairs), "dup_lines": sum(int(b) - int(a) + 1 for _, a, b in pairs),
            "duplicates": found.splitlines()[0] if found else "", "runs": [], "counted": {}}


def moves(tree: Path, rooms: int, seconds: float, warmup: float,
          env: dict[str, str] | None = None) -> dict[str, Any]:
    """One run of the tree's own bench/moves.py: its result line."""
    out = subprocess.run(
        [sys.executable, str(tree / "bench/moves.py"), "--rooms", str(rooms), "--seconds",
         str(seconds), "--warmup", str(warmup)],
        check=True, capture_output=True, text=True, env={**os.environ, **(env or {})}).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def cell(values: list[float], unit: str = "", scale: float = 1.0, digits: int = 0) -> str:
    """The median, with every value in brackets where there are several."""
    def show(v: float) -> str:
        return f"{v / scale:,.{digits}f}{unit}"
    middle = statistics.median(values)
    return show(middle) + (f" ({' / '.join(map(show, values))})" if len(values) > 1 else "")


def table(base: dict[str, Any], head: dict[str, Any]) -> str:
    def ratio(key: Callable[[dict[str, Any]], list[float]]) -> str:
        before, after = statistics.median(key(base)), statistics.median(key(head))
        return f"{(after / before - 1) * 100:+.1f} %" if before else ""

    per_k = ("k", 1000.0, 1)  # unit, scale, digits
    rows: list[tuple[str, Callable[[dict[str, Any]], list[float]], tuple[str, float, int]]] = [
        ("moves/s, compiled, R = 500 (median of alternated runs)",
         lambda s: [r["moves_per_s"] for r in s["runs"]], ("", 1.0, 0)),
        ("p99, compiled, R = 500", lambda s: [r["p99_ms"] for r in s["runs"]],
         (" ms", 1.0, 1)),
        ("server instructions per move, compiled", lambda s: s["counted"]["compiled"], per_k),
        ("server instructions per move, pure", lambda s: s["counted"]["pure"], per_k),
        ("lines of C (`git ls-files '*.c' \\| xargs wc -l`)", lambda s: [s["c_lines"]],
         ("", 1.0, 0)),
        ("lines of duplicated Python (`duplicates`: pairs of Python files, first sides)",
         lambda s: [s["dup_lines"]], ("", 1.0, 0)),
    ]
    out = [f"| measure | before (`{base['sha'][:7]}`) | after (`{head['sha'][:7]}`) | change |",
           "|---|---|---|---|"]
    for name, key, fmt in rows:
        if key(base) and key(head):
            out.append(f"| {name} | {cell(key(base), *fmt)} | {cell(key(head), *fmt)} | "
                       f"{ratio(key)} |")
    for s in (base, head):
        out.append(f"\n`{s['sha'][:7]}` duplicates: {s['duplicates']} "
                   f"({s['dup_pairs']} of them both Python)")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="8487996")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--rounds", type=int, default=3, help="alternated R = 500 runs each")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--counted", type=int, default=2, help="callgrind runs per build")
    parser.add_argument("--work", type=Path, help="where the trees are built (kept)")
    parser.add_argument("--json", type=Path, help="every run's numbers, written here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="playhall-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    sides = [prepare(git("rev-parse", "--verify", f"{c}^{{commit}}").strip(), work)
             for c in (args.base, args.head)]
    try:
        for i in range(args.rounds):
            for side in sides if i % 2 == 0 else sides[::-1]:
                log(f"{side['sha'][:9]}: round {i + 1}, R = 500")
                side["runs"].append(moves(side["trees"]["compiled"], 500, args.seconds,
                                          args.warmup))
        for side in sides:
            for build, tree in side["trees"].items():
                counts = side["counted"].setdefault(build, [])
                for i in range(args.counted):
                    log(f"{side['sha'][:9]}: {build}, callgrind {i + 1}")
                    out = work / "callgrind" / f"{side['sha'][:12]}-{build}-{i}.out"
                    out.parent.mkdir(exist_ok=True)
                    result = moves(tree, 20, 40, 3, {"BENCH_CALLGRIND": str(out)})
                    counts.append(result["server_instructions_per_move"])
    finally:
        if args.json:
            args.json.write_text(json.dumps(sides, default=str, indent=1))
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(table(*sides))


if __name__ == "__main__":
    main()
