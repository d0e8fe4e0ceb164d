#!/usr/bin/env python3
"""Runs every command the README and docs/ show, so they cannot drift from the tool.

A fenced block whose info string is `sh` is run here: each command (a line, with `\\` joining
lines; comment lines skipped) in a scratch folder that sees the repository's data/, profiles/,
models/, tests/, bench/, examples/, python/ and scripts/, the build folder of POWERSHAPE as build/,
with that `powershape` first on PATH and HOME the scratch folder itself. The
HTML comment right before the block says what each command must print, in order, one entry per
command, `|` between them: `<!-- expect: WORDS | exit 1: WORDS -->` (exit 0 unless told; WORDS
must appear in its stdout or stderr). A block marked `sh gpu` is run the same way only with
--gpu (scripts/gpu-check.sh readme docs); `sh ci` blocks (the quick start, pip install) are run by .ci/run
and tests/install, which this test checks by finding each such command in .ci/run or a test
script. Any other block is text. A page with a `sh` block whose commands and expectations differ
in number fails.
  docs_test.py POWERSHAPE SOURCE_DIR [--gpu] [--only PAGE[,PAGE...]] [--log DIR]
--only takes pages by path (README.md, docs/x.md) or a folder with its slash (docs/); --log
writes each command's output to DIR/PAGE_LINE_N.txt. A command may take 300 s (600 with --gpu:
optimize's race).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^```(\S*)(?:[ \t]+(\S+))?\s*$")
EXPECT = re.compile(r"^<!--\s*expect:(.*?)-->\s*$")
LINKED = ("data", "profiles", "models", "tests", "bench", "examples", "python", "scripts")


def blocks(path):
    """Yields (line number, kind, commands, expectations or None) for each sh block of a page."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, kind, start = m.group(1), m.group(2) or "cpu", i + 1
        expect = None
        if i > 0 and EXPECT.match(lines[i - 1]):
            expect = [e.strip() for e in EXPECT.match(lines[i - 1]).group(1).split("|")]
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if lang != "sh":
            continue
        commands, cur = [], ""
        for line in body:
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            cur += line[:-1] + " " if line.endswith("\\") else line
            if not line.endswith("\\"):
                commands.append(cur.strip())
                cur = ""
        yield start, kind, commands, expect


def strip_comment(cmd):
    """The command without a trailing `# ...` comment (a # inside quotes is kept)."""
    out, quote = [], None
    for i, c in enumerate(cmd):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or cmd[i - 1].isspace()):
            break
        out.append(c)
    return "".join(out).strip()


def scratch(source, powershape):
    d = tempfile.mkdtemp(prefix="powershape-docs-")
    source = os.path.abspath(source)
    for name in LINKED:
        if os.path.exists(os.path.join(source, name)):
            os.symlink(os.path.join(source, name), os.path.join(d, name))
    os.symlink(os.path.dirname(os.path.abspath(powershape)), os.path.join(d, "build"))
    os.makedirs(os.path.join(d, ".bin"))
    os.symlink(os.path.abspath(powershape), os.path.join(d, ".bin", "powershape"))
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("powershape")
    ap.add_argument("source")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--only", help="pages by path from SOURCE_DIR, or a folder with its slash, comma-separated")
    ap.add_argument("--log", help="a folder for each command's output")
    a = ap.parse_args()
    pages = [os.path.join(a.source, "README.md")]
    for root, _, files in os.walk(os.path.join(a.source, "docs")):
        pages += [os.path.join(root, f) for f in sorted(files) if f.endswith(".md")]
    if a.only:
        wanted = a.only.split(",")
        pages = [p for p in pages if any(os.path.relpath(p, a.source).startswith(w) for w in wanted)]
        if not pages:
            ap.error(f"--only {a.only}: no such page")
    ci_text = ""
    for f in [os.path.join(a.source, ".ci", "run")] + [
        os.path.join(r, f) for r, _, fs in os.walk(os.path.join(a.source, "tests", "install")) for f in fs
    ]:
        ci_text += open(f, encoding="utf-8", errors="replace").read()
    failed = ran = 0
    for page in pages:
        rel = os.path.relpath(page, a.source)
        for line, kind, commands, expect in blocks(page):
            where = f"{rel}:{line}"
            if kind == "ci":
                for c in commands:
                    ok = strip_comment(c) in ci_text
                    failed += not ok
                    print(
                        ("ok   " if ok else "FAIL ") + f"{where}: {strip_comment(c)} (run by .ci/run or tests/install)"
                    )
                continue
            if kind not in ("cpu", "gpu"):
                print(f"FAIL {where}: a sh block is sh, sh gpu or sh ci, not '{kind}'")
                failed += 1
                continue
            if expect is None or len(expect) != len(commands):
                print(
                    f"FAIL {where}: {len(commands)} commands but {0 if expect is None else len(expect)} "
                    "expectations (<!-- expect: ... --> before the block)"
                )
                failed += 1
                continue
            if (kind == "gpu") != a.gpu:
                continue
            d = scratch(a.source, a.powershape)
            env = dict(os.environ, HOME=d, PATH=os.path.join(d, ".bin") + os.pathsep + os.environ["PATH"])
            # The Python package as an install gives it (the README's pip install): importable, with
            # this build's library.
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (os.path.join(os.path.abspath(a.source), "python"), os.environ.get("PYTHONPATH")) if p
            )
            lib = os.path.join(os.path.dirname(os.path.abspath(a.powershape)), "libpowershape_c.so")
            if os.path.exists(lib):
                env.setdefault("POWERSHAPE_LIB", lib)
            for n, (c, e) in enumerate(zip(commands, expect)):
                m = re.match(r"exit (\d+):\s*(.*)", e)
                code, words = (int(m.group(1)), m.group(2)) if m else (0, e)
                t0 = time.time()
                try:
                    p = subprocess.run(
                        ["bash", "-c", strip_comment(c)],
                        cwd=d,
                        env=env,
                        capture_output=True,
                        text=True,
                        errors="replace",
                        timeout=600 if a.gpu else 300,
                    )
                    out, rc = p.stdout + p.stderr, p.returncode
                except subprocess.TimeoutExpired:
                    out, rc = "(over the time a command may take)", -1
                if a.log:
                    os.makedirs(a.log, exist_ok=True)
                    name = f"{rel.replace('/', '_')}_{line}_{n}.txt"
                    with open(os.path.join(a.log, name), "w", encoding="utf-8") as f:
                        f.write(f"$ {strip_comment(c)}\n{out}")
                ok = rc == code and words in out
                ran += 1
                failed += not ok
                print(("ok   " if ok else "FAIL ") + f"{where}: {strip_comment(c)} ({time.time() - t0:.1f} s)")
                if not ok:
                    print(f"     exit {rc} (wanted {code}), wanted '{words}' in:\n" + out[-1500:])
            shutil.rmtree(d, ignore_errors=True)
    print(f"{ran} commands run, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
