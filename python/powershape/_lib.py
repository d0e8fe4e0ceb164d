"""Finds and loads libpowershape_c.so, the C API (include/powershape/powershape.h), with ctypes.

Looked for in order: $POWERSHAPE_LIB (a path), the one a pip install carries (_prefix/lib), the
package's own folder, an install prefix's lib/ beside this package (cmake --install), the
repository's build/ (a checkout), then the system's library path. Nothing here compiles against
torch, so one package works across torch versions.
"""
import ctypes
import ctypes.util
import shutil
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAME = "libpowershape_c.so"
# What `pip install .` carries (setup.py): bin/powershape, lib/libpowershape_c.so, share/powershape.
_PREFIX = os.path.join(_HERE, "_prefix")


class PowershapeError(RuntimeError):
    """A call into libpowershape_c failed; the message is the library's one-line reason, and
    `.kind` says which kind of failure it was (the C API's PS_ERROR_*): "invalid_input",
    "unsupported" or "device". Each kind is a class of its own below."""

    kind = "device"


class InvalidInputError(PowershapeError, ValueError):
    """A caller's bad argument, file or shape (PS_ERROR_INVALID_INPUT); a ValueError too."""

    kind = "invalid_input"


class UnsupportedError(PowershapeError):
    """Something this machine, driver or device lacks (PS_ERROR_UNSUPPORTED): no driver, no GPU
    backend, no library."""

    kind = "unsupported"


class DeviceError(PowershapeError):
    """A device, driver or system call that failed (PS_ERROR_DEVICE)."""

    kind = "device"


_BY_KIND = {1: InvalidInputError, 2: UnsupportedError, 3: DeviceError}  # PS_ERROR_* (powershape.h)


# ps_abi_layout()'s kinds (include/powershape/powershape_abi.h) as ctypes types.
_KINDS = {
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "ptr": ctypes.c_void_p,
    "size": ctypes.c_size_t,
}
_structs = {}


def struct(name):
    """The ctypes structure of the C API's `name` ("ps_summary", "ps_lmhead_options",
    "ps_lmhead_args"), made from the loaded library's own layout (ps_abi_layout)."""
    lib()
    return _structs[name]


def _structures(layout):
    """ctypes structures from ps_abi_layout()'s lines, each field checked at the offset and each
    structure at the size the library was compiled with: a library whose structures this Python
    cannot lay out alike is refused here, not misread later."""
    fields, sizes, offsets = {}, {}, {}
    for line in layout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "sizeof":
            sizes[parts[0]] = int(parts[2])
        elif len(parts) == 4 and parts[2] in _KINDS:
            fields.setdefault(parts[0], []).append((parts[1], _KINDS[parts[2]]))
            offsets[(parts[0], parts[1])] = int(parts[3])
        else:
            raise UnsupportedError(f"libpowershape_c's ABI layout has a line this package cannot read: {line!r}")
    out = {}
    for name, fs in fields.items():
        cls = type(name, (ctypes.Structure,), {"_fields_": fs})
        for field, _ in fs:
            if getattr(cls, field).offset != offsets[(name, field)]:
                raise UnsupportedError(
                    f"libpowershape_c's {name}.{field} is at byte {offsets[(name, field)]}, "
                    f"ctypes puts it at {getattr(cls, field).offset}"
                )
        if ctypes.sizeof(cls) != sizes.get(name):
            raise UnsupportedError(
                f"libpowershape_c's {name} is {sizes.get(name)} bytes, ctypes makes {ctypes.sizeof(cls)}"
            )
        out[name] = cls
    return out


def _candidates():
    env = os.environ.get("POWERSHAPE_LIB")
    if env:
        return [env]
    out = [os.path.join(_PREFIX, "lib", _NAME), os.path.join(_HERE, _NAME)]
    # An install prefix: P/lib/pythonX.Y/site-packages/powershape -> P/lib
    out.append(os.path.normpath(os.path.join(_HERE, "..", "..", "..", _NAME)))
    out.append(os.path.normpath(os.path.join(_HERE, "..", "..", "build", _NAME)))
    found = ctypes.util.find_library("powershape_c")
    if found:
        out.append(found)
    return out


def bundled_cli():
    """The powershape command a pip install carries, or None."""
    path = os.path.join(_PREFIX, "bin", "powershape")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def cli():
    """The powershape command beside the library found: $POWERSHAPE_BIN, the one a pip install
    carries, the build tree's, an install prefix's bin/, or the one on PATH."""
    env = os.environ.get("POWERSHAPE_BIN")
    if env:
        return env
    if bundled_cli():
        return bundled_cli()
    lib_path = getattr(lib(), "_name", "")
    here = os.path.dirname(os.path.abspath(lib_path)) if lib_path else _HERE
    for path in (os.path.join(here, "powershape"), os.path.join(here, "..", "bin", "powershape")):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.normpath(path)
    found = shutil.which("powershape")
    if found:
        return found
    raise UnsupportedError("cannot find the powershape command (set POWERSHAPE_BIN to its path)")


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            raise UnsupportedError(f"cannot load {path}: {e}") from None
    raise UnsupportedError(
        f"cannot find {_NAME} (looked in: {', '.join(tried)}; set POWERSHAPE_LIB to its path, or "
        "build powershape with scripts/build.sh or install it with cmake --install)"
    )


_lib = None


def lib():
    """The loaded library, with its functions' signatures declared (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    L = _load()
    try:
        L.ps_abi_layout.restype = ctypes.c_char_p
    except AttributeError:
        raise UnsupportedError(f"{L._name} has no ps_abi_layout: a library older than this package") from None
    _structs.update(_structures(L.ps_abi_layout().decode()))
    Summary, LmHeadOptions, LmHeadArgs = (_structs[n] for n in ("ps_summary", "ps_lmhead_options", "ps_lmhead_args"))
    vp, i64, cs = ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p
    sigs = {
        "ps_version": (cs, []),
        "ps_last_error": (cs, []),
        "ps_last_error_kind": (ctypes.c_int, []),
        "ps_now_ns": (i64, []),
        "ps_mark": (ctypes.c_int, [ctypes.c_int, cs, i64]),
        "ps_recorder_open": (vp, [cs, ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_double]),
        "ps_recorder_gpu_count": (ctypes.c_int, [vp]),
        "ps_region_begin": (ctypes.c_int, [vp, cs, i64]),
        "ps_region_end": (ctypes.c_int, [vp, cs, i64, ctypes.POINTER(Summary), ctypes.c_int]),
        "ps_region_summary": (ctypes.c_int, [vp, cs, ctypes.POINTER(Summary), ctypes.c_int]),
        "ps_cpu_zone": (ctypes.c_int, [vp, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]),
        "ps_region_cpu_energy": (ctypes.c_int, [vp, cs, ctypes.POINTER(ctypes.c_double), ctypes.c_int]),
        "ps_recorder_close": (None, [vp]),
        "ps_lmhead_options_default": (None, [ctypes.POINTER(LmHeadOptions)]),
        "ps_lmhead_options_check": (ctypes.c_int, [ctypes.POINTER(LmHeadOptions)]),
        "ps_lmhead_will_fuse": (ctypes.c_int, [ctypes.POINTER(LmHeadOptions)]),
        "ps_lmhead_workspace_bytes": (ctypes.c_size_t, [i64, i64, i64, ctypes.POINTER(LmHeadOptions)]),
        "ps_lmhead_run": (ctypes.c_int, [ctypes.POINTER(LmHeadArgs), ctypes.POINTER(LmHeadOptions), vp]),
        "ps_lmhead_scale_gradients": (
            ctypes.c_int,
            [ctypes.POINTER(LmHeadArgs), ctypes.POINTER(LmHeadOptions), vp, vp],
        ),
        "ps_lmhead_tuned_chunks": (ctypes.c_int, [i64, i64, i64, ctypes.c_int, ctypes.c_int, cs, ctypes.c_int]),
        "ps_chunker_open": (vp, [ctypes.POINTER(ctypes.c_int), ctypes.c_int, cs, ctypes.c_double]),
        "ps_chunker_next": (ctypes.c_int, [vp]),
        "ps_chunker_report": (ctypes.c_int, [vp, ctypes.c_int, ctypes.c_double, ctypes.c_double]),
        "ps_chunker_best": (ctypes.c_int, [vp]),
        "ps_chunker_settled": (ctypes.c_int, [vp]),
        "ps_chunker_close": (None, [vp]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype, fn.argtypes = res, args
    _lib = L
    return L


def check(ok):
    """When `ok` is false, raises the library's reason as the class of its kind: InvalidInputError
    (a ValueError) for a caller's bad argument, file or shape, UnsupportedError for what the
    machine lacks, DeviceError for a device or call that failed."""
    if not ok:
        why = lib().ps_last_error().decode(errors="replace")
        raise _BY_KIND.get(lib().ps_last_error_kind(), DeviceError)(why)
