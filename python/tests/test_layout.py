"""The ctypes structures against the C header as the C compiler lays it out: every field of the
header's structures is in the Python class, at the same offset, and the sizes agree. The layout
program (tests/capi/layout.c) is built with the tests; CTest says where it is."""
import ctypes
import os
import subprocess

import pytest

from powershape._lib import LmHeadArgs, LmHeadOptions, Summary

LAYOUT = os.environ.get("POWERSHAPE_CAPI_LAYOUT")
CLASSES = {"ps_summary": Summary, "ps_lmhead_options": LmHeadOptions, "ps_lmhead_args": LmHeadArgs}


@pytest.mark.skipif(not LAYOUT, reason="run by CTest, which builds tests/capi/layout.c")
def test_ctypes_structures_match_the_c_header():
    seen = {name: set() for name in CLASSES}
    for line in subprocess.run([LAYOUT], check=True, capture_output=True, text=True).stdout.splitlines():
        struct, field, value = line.split()
        cls = CLASSES[struct]
        if field == "sizeof":
            assert ctypes.sizeof(cls) == int(value), struct
            continue
        assert hasattr(cls, field), f"{struct}.{field} is missing from {cls.__name__}"
        assert getattr(cls, field).offset == int(value), f"{struct}.{field}"
        seen[struct].add(field)
    for struct, cls in CLASSES.items():
        assert {f for f, _ in cls._fields_} == seen[struct], f"{cls.__name__} has fields the header lacks"
