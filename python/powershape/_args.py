"""Checks of Python arguments before they reach ctypes, which would wrap an integer to its C width
(2**32 + 1 chunks become 1) and take a bool as 1: the type, and what the C width holds, are
checked here; the ranges of the op's options are the C++ op's own (ps_lmhead_options_check)."""
import math
import numbers
import operator

INT32_MAX = 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def integer(name, value, lo=INT64_MIN, hi=INT64_MAX):
    """`value` as an int in [lo, hi]; a bool or a float is not an integer."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not a bool ({value!r})")
    if isinstance(value, int):  # what torch.compile traces (it constant-folds these checks)
        v = value
    else:
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(f"{name} must be an integer, not {value!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, not {v}")
    return v


def real(name, value, lo=-math.inf, hi=math.inf):
    """`value` as a finite float in [lo, hi]; a bool is not a number here."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {value!r}")
    v = float(value)
    if not -math.inf < v < math.inf:  # NaN fails too
        raise ValueError(f"{name} must be finite, not {v}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], not {v:g}")
    return v


def text(name, value):
    """`value` as bytes for C: a str without NUL (C would cut the name there)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {value!r}")
    if "\0" in value:
        raise ValueError(f"{name} must not contain a NUL character: {value!r}")
    return value.encode()
