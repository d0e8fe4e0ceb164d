"""`pip install --no-build-isolation .`: the Python package with the C library and the CLI inside it.

CMake builds libpowershape_c.so and the `powershape` command (and the GPU backend where nvcc is
found) in Release, installs them stripped into a staging prefix, and the wheel carries that prefix
as powershape/_prefix/{bin,lib,share}: the package loads its own library, and the `powershape`
on PATH (powershape._cli) runs its own command, which finds its profiles and data beside it.
Every build file goes to a cache folder outside the source tree ($POWERSHAPE_BUILD_DIR, else
$XDG_CACHE_HOME/powershape/pip-<hash of the source path>), so the checkout stays clean and a
second install is incremental; $POWERSHAPE_CMAKE_ARGS adds CMake arguments (e.g.
"-DPOWERSHAPE_CUDA=OFF", "-DCMAKE_CUDA_ARCHITECTURES=89"). Needs only what scripts/deps.sh pip
installs (cmake, a C++20 compiler, CLI11, nlohmann-json, Eigen, setuptools, wheel): no network.
"""

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

SOURCE = os.path.dirname(os.path.abspath(__file__))


def _build_dir():
    explicit = os.environ.get("POWERSHAPE_BUILD_DIR")
    if explicit:
        return os.path.abspath(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "powershape", "pip-" + hashlib.sha256(SOURCE.encode()).hexdigest()[:16])


BUILD = _build_dir()


def _terminal():
    """The user's terminal, where pip hides the build's output (it shows it with -v): each stage is
    said there, and the build's progress kept on one line. None without one (CI, a pipe)."""
    if sys.stdout.isatty():
        return None  # the output reaches the user already
    try:
        return open("/dev/tty", "w")
    except OSError:
        return None


TERMINAL = _terminal()


def _say(text, end="\n"):
    if TERMINAL is not None:
        TERMINAL.write(text + end)
        TERMINAL.flush()


def _run(cmd, stage):
    """Runs one stage, its output to pip's log (shown with -v); Ninja's [k/n] lines as progress."""
    print("powershape:", " ".join(cmd), flush=True)
    _say(f"powershape: {stage}")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    for line in p.stdout:
        sys.stdout.write(line)
        m = re.match(r"\[(\d+)/(\d+)\]", line)
        if m:
            _say(f"\rpowershape:   {m.group(1)} of {m.group(2)} steps", end="")
    sys.stdout.flush()
    if p.wait() != 0:
        _say("")
        raise subprocess.CalledProcessError(p.returncode, cmd)
    if stage.startswith("[2/3]"):
        _say("")


class BuildWithNative(build_py):
    """Builds the native parts with CMake and puts their stripped install beside the package."""

    def run(self):
        super().run()
        cmake = os.path.join(BUILD, "cmake")
        stage = os.path.join(BUILD, "stage")
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        jobs = os.environ.get("POWERSHAPE_BUILD_JOBS") or str(os.cpu_count() or 1)
        _run(
            ["cmake", "-S", SOURCE, "-B", cmake, *gen, "-DCMAKE_BUILD_TYPE=Release"]
            + ["-DBUILD_TESTING=OFF", "-DPOWERSHAPE_BENCH=OFF", "-DCMAKE_INSTALL_LIBDIR=lib"]
            + shlex.split(os.environ.get("POWERSHAPE_CMAKE_ARGS", "")),
            f"[1/3] configuring with CMake in {cmake}",
        )
        _run(
            ["cmake", "--build", cmake, "-j", jobs],
            f"[2/3] building the CLI and libpowershape_c on {jobs} cores (a first build: minutes)",
        )
        shutil.rmtree(stage, ignore_errors=True)
        _run(["cmake", "--install", cmake, "--prefix", stage, "--strip"], "[3/3] installing, stripped")
        prefix = os.path.join(self.build_lib, "powershape", "_prefix")
        shutil.rmtree(prefix, ignore_errors=True)
        shutil.copytree(os.path.join(stage, "bin"), os.path.join(prefix, "bin"))
        lib = os.path.join(prefix, "lib")
        os.makedirs(lib)
        # The C library under the name the package loads, and the GPU backend plugin where built;
        # headers, static libraries and CMake files are for C++ users of a cmake --install.
        shutil.copy2(os.path.join(stage, "lib", "libpowershape_c.so"), lib, follow_symlinks=True)
        plugins = os.path.join(stage, "lib", "powershape")
        for name in os.listdir(plugins) if os.path.isdir(plugins) else []:
            if name.endswith(".so"):
                os.makedirs(os.path.join(lib, "powershape"), exist_ok=True)
                shutil.copy2(os.path.join(plugins, name), os.path.join(lib, "powershape"))
        shutil.copytree(os.path.join(stage, "share"), os.path.join(prefix, "share"))


class NativeDistribution(Distribution):
    """A wheel for this platform (it carries native code), not a pure-Python one."""

    def has_ext_modules(self):
        return True


setup(
    distclass=NativeDistribution,
    cmdclass={"build_py": BuildWithNative},
    # setuptools' own build folder and egg-info beside CMake's, not in the checkout
    options={"build": {"build_base": os.path.join(BUILD, "setuptools")}, "egg_info": {"egg_base": BUILD}},
)
