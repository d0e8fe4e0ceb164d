"""The C API's structures, one table (include/powershape/powershape_abi.h) read three ways: by the C
compiler (tests/capi/layout.c, built with the tests; CTest says where it is), by the library as
compiled in C++ (ps_abi_layout), and by the Python package, whose ctypes structures are made from
the library's layout and checked against it when it loads."""
import ctypes
import os
import subprocess

import pytest

from powershape import UnsupportedError
from powershape._lib import _structures, lib, struct

LAYOUT = os.environ.get("POWERSHAPE_CAPI_LAYOUT")


def library_layout():
    try:
        return lib().ps_abi_layout().decode()
    except UnsupportedError as e:
        pytest.skip(f"no libpowershape_c: {e}")


@pytest.mark.skipif(not LAYOUT, reason="run by CTest, which builds tests/capi/layout.c")
def test_the_c_compiler_the_library_and_ctypes_lay_the_structures_out_alike():
    c = subprocess.run([LAYOUT], check=True, capture_output=True, text=True).stdout
    assert c == library_layout()
    for line in c.splitlines():
        parts = line.split()
        cls = struct(parts[0])
        if parts[1] == "sizeof":
            assert ctypes.sizeof(cls) == int(parts[2]), line
        else:
            assert getattr(cls, parts[1]).offset == int(parts[3]), line


def test_every_structure_and_the_op_options_fields():
    layout = library_layout()
    assert {line.split()[0] for line in layout.splitlines()} == {"ps_summary", "ps_lmhead_options", "ps_lmhead_args"}
    names = [f for f, _ in struct("ps_lmhead_options")._fields_]
    assert names[:2] == ["chunks", "tokens_per_chunk"] and "fuse_exp" in names


def test_a_layout_ctypes_cannot_match_is_refused_at_load():
    good = "s a i32 0\ns b i64 8\ns sizeof 16\n"
    assert ctypes.sizeof(_structures(good)["s"]) == 16
    with pytest.raises(UnsupportedError, match=r"s\.b is at byte 4"):
        _structures("s a i32 0\ns b i64 4\ns sizeof 16\n")
    with pytest.raises(UnsupportedError, match="s is 24 bytes"):
        _structures("s a i32 0\ns b i64 8\ns sizeof 24\n")
    with pytest.raises(UnsupportedError, match="cannot read"):
        _structures("s a bool 0\n")
