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

# Literals that are no message: the arguments of a command line the library runs (optimize starts
# `powershape smooth`), each a literal of its own.
NOT_MESSAGES = {("src/powershape/optimize/optimize.cpp", flag) for flag in ("--floor", "--gap", "--ramp")}


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
    """(line, text) of each run of string literals (adjacent ones joined, as the compiler joins
    them: only spaces and comments between), from a scan that knows comments, character literals,
    escapes and raw strings, so that none of them hides a message or makes one up."""
    i, n, line = 0, len(text), 1
    run, run_line = None, 0
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
            continue
        raw = re.match(r'(?:u8|[uUL])?R"([^()\\ ]{0,16})\(', text[i : i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = ")" + raw.group(1) + '"'
            j = text.find(end, i + raw.end())
            j = n if j < 0 else j
            body, start = text[i + raw.end() : j], line
            line += text.count("\n", i, j)
            i = j + len(end)
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j, body_chars = i + 1, []
            while j < n and text[j] != c and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n:
                    body_chars.append(text[j : j + 2])
                    j += 2
                    continue
                body_chars.append(text[j])
                j += 1
            body, start = "".join(body_chars), line
            i = j + 1
            if c == "'":
                continue  # a character literal: no message, and no quote opened
        else:
            if c == "\n":
                line += 1
            if not c.isspace() and run is not None:
                yield run_line, run
                run = None
            i += 1
            continue
        if run is None:
            run, run_line = body, start
        else:
            run += body
    if run is not None:
        yield run_line, run


def main(ps, root):
    root = pathlib.Path(root)
    known = flags(ps)
    if len(known) < 20:  # the help could not be read: a check that sees no flags checks nothing
        print(f"flagless: only {len(known)} flags found in `{ps} help`")
        return 1
    bad = 0
    for f in sorted((root / "src" / "powershape").rglob("*")):
        rel = f.relative_to(root).as_posix()
        if not f.is_file():
            continue
        for line, lit in literals(f.read_text(errors="replace")):
            if (rel, lit) in NOT_MESSAGES:
                continue
            for flag in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", lit)) & known):
                print(f'flagless: {rel}:{line}: names {flag}: "{lit[:100]}"')
                bad += 1
    if bad == 0:
        print(f"flagless: no library message names one of the CLI's {len(known)} flags")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
