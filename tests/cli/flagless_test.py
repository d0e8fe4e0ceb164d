#!/usr/bin/env python3
"""No library message names a command-line flag (util/error.hpp's rule): the library is called
from C and Python too, where a flag means nothing; the CLI adds its flag where it passes a value
on (an error's subject, or its remedy). Every string literal under src/powershape, adjacent ones
joined (a message split over lines), is searched for each long flag that `powershape help` shows
for any subcommand. Prints each hit (file:line) and exits 1 if there is any.

    flagless_test.py POWERSHAPE SOURCE_ROOT
"""
import pathlib
import re
import subprocess
import sys

# Literals that are no message: a command line the library runs (optimize starts `smooth`).
NOT_MESSAGES = {"src/powershape/optimize/optimize.cpp": "the smooth command line optimize runs"}


def flags(ps):
    """Every long flag of every subcommand, nested ones included."""
    out, seen, todo = set(), set(), [[]]
    while todo:
        path = todo.pop()
        text = subprocess.run([ps, "help", *path], capture_output=True, text=True, check=True).stdout
        out |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", text))
        block = re.split(r"^subcommands:$", text, maxsplit=1, flags=re.M | re.I)
        for name in re.findall(r"^\s{2}(\w[\w-]*)\s", block[1], re.M) if len(block) > 1 else []:
            if tuple(path + [name]) not in seen:
                seen.add(tuple(path + [name]))
                todo.append(path + [name])
    return out - {"--help", "--version"}


def literals(text):
    """(line, text) of each string literal run (adjacent literals joined), comments left out."""
    code = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)
    code = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code, flags=re.S)
    run = re.compile(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*')
    for m in run.finditer(code):
        joined = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0)))
        yield code.count("\n", 0, m.start()) + 1, joined


def main(ps, root):
    root = pathlib.Path(root)
    known = flags(ps)
    if len(known) < 20:  # the help could not be read: a check that sees no flags checks nothing
        print(f"flagless: only {len(known)} flags found in `{ps} help`")
        return 1
    bad = 0
    for f in sorted((root / "src" / "powershape").rglob("*")):
        rel = f.relative_to(root).as_posix()
        if f.suffix not in (".cpp", ".hpp", ".cu", ".cuh") or rel in NOT_MESSAGES:
            continue
        for line, lit in literals(f.read_text()):
            for flag in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", lit)) & known):
                print(f'flagless: {rel}:{line}: names {flag}: "{lit[:100]}"')
                bad += 1
    if bad == 0:
        print(f"flagless: no library message names one of the CLI's {len(known)} flags")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
