"""examples/: each runs with what it declares, and its --tiny mode with Debian's torch alone."""
import os
import subprocess
import sys

import pytest

FINETUNE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "finetune.py")


def run(*args, block_transformers=False):
    # A module set to None in sys.modules fails to import: transformers as if not installed.
    code = (
        "import runpy, sys; "
        + ("sys.modules['transformers'] = None; " if block_transformers else "")
        + f"sys.argv = [{FINETUNE!r}] + {list(args)!r}; runpy.run_path({FINETUNE!r}, run_name='__main__')"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_help_needs_nothing_but_python():
    r = run("--help", block_transformers=True)
    assert r.returncode == 0 and "--tiny" in r.stdout


def test_tiny_trains_with_torch_alone():
    pytest.importorskip("torch")
    r = run("--tiny", "--steps", "2", block_transformers=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("2 steps, ") and "tokens/s" in r.stdout


def test_the_qwen2_model_without_transformers_says_what_to_install():
    pytest.importorskip("torch")
    r = run("--steps", "1", block_transformers=True)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "finetune.py: the Qwen2 model needs transformers (pip install --no-build-isolation '.[hf]'); "
        "--tiny runs with torch alone"
    ]
