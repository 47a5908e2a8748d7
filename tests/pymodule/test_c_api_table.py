# The Python module binds the C API by hand (ctypes prototypes in python/sprawling/__init__.py):
# this test reads every prototype of include/sprawling/sprawling.h and checks that the module
# binds each one, with the argument and result types the header declares, so a function added or
# changed in the header fails here instead of misbehaving at run time.
import ctypes
import pathlib
import re

import pytest

import sprawling

HEADER = pathlib.Path(__file__).resolve().parents[2] / "include" / "sprawling" / "sprawling.h"
OPAQUE = {"sprawling_config", "sprawling_sandbox", "sprawling_job", "sprawling_outcome", "sprawling_error",
          "sprawling_cancel"}
ENUMS = {"sprawling_status", "sprawling_exit_kind", "sprawling_tier"}


def prototypes():
    text = HEADER.read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    found = re.findall(r"SPRAWLING_API\s+([A-Za-z_][A-Za-z0-9_ \*]*?)\s*\b(sprawling_[a-z0-9_]+)\s*\(([^;{]*?)\)\s*;",
                       text, flags=re.S)
    assert len(found) > 50, f"read only {len(found)} prototypes from {HEADER}: the pattern no longer fits the header"
    out = {}
    for result, name, params in found:
        params = " ".join(params.split())
        args = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
        # Drop each parameter's name: the type is everything before the last identifier.
        arg_types = [re.sub(r"\s*\b[A-Za-z_][A-Za-z0-9_]*$", "", a) for a in args]
        out[name] = (" ".join(result.split()), arg_types)
    return out


def expected(c_type, is_result):
    """The ctypes types that bind C type `c_type` correctly (several where either works)."""
    t = " ".join(c_type.replace("*", " * ").split()).replace(" *", "*")
    t = re.sub(r"^const ", "", t)
    if t == "void":
        return {None}
    if t in ("int",) or t in ENUMS:
        return {ctypes.c_int}
    if t == "uint64_t":
        return {ctypes.c_uint64}
    if t == "size_t":
        return {ctypes.c_size_t}
    if t == "char*":
        return {ctypes.c_char_p}
    if t == "uint8_t*":
        # Bytes going in are passed as a char pointer; bytes coming out are read through a pointer.
        return {ctypes.POINTER(ctypes.c_uint8)} if is_result else {ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint8)}
    if t == "size_t*":
        return {ctypes.POINTER(ctypes.c_size_t)}
    if t == "void*":
        return {ctypes.c_void_p}
    if t == "sprawling_output_sink":
        return {sprawling._SINK}
    if t.endswith("**") and t[:-2] in OPAQUE:
        return {ctypes.POINTER(sprawling._Handle)}
    if t.endswith("*") and t[:-1] in OPAQUE:
        return {sprawling._Handle}
    raise AssertionError(f"the test does not know the C type {c_type!r}: teach expected() how ctypes binds it")


@pytest.mark.parametrize("name", sorted(prototypes()))
def test_each_c_function_is_bound_with_the_header_types(name):
    result, args = prototypes()[name]
    fn = getattr(sprawling._lib, name)
    assert fn.argtypes is not None, f"{name} is declared in sprawling.h but the Python module does not bind it"
    assert fn.restype in expected(result, True), f"{name}: result {result!r} bound as {fn.restype}"
    assert len(fn.argtypes) == len(args), f"{name}: {len(args)} parameters in the header, {len(fn.argtypes)} bound"
    for k, (c_type, bound) in enumerate(zip(args, fn.argtypes)):
        assert bound in expected(c_type, False), f"{name}: parameter {k} {c_type!r} bound as {bound}"


def test_the_exit_kinds_agree_with_the_c_library():
    for number, kind in sprawling._KINDS.items():
        assert sprawling._lib.sprawling_exit_kind_name(number).decode() == kind
