"""The `powershape` command a pip install puts on PATH: runs the CLI carried in the package (the
same program scripts/build.sh builds), with the arguments and exit code unchanged."""
import os
import sys

from ._lib import bundled_cli


def main():
    path = bundled_cli()
    if path is None:
        sys.exit(
            "powershape: this copy of the package carries no CLI (it is made by `pip install .`; "
            "from a checkout run scripts/build.sh and use build/powershape)"
        )
    os.execv(path, [path] + sys.argv[1:])
