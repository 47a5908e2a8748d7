# The type stubs (python/sprawling/__init__.pyi) against the module itself: every public name the
# module exports is in the stubs and the other way round, and each function's and method's
# parameters (names, kinds, which have defaults) and each dataclass's fields are the same in both.
import ast
import dataclasses
import inspect
import pathlib

import sprawling

STUBS = pathlib.Path(sprawling.__file__).with_name("__init__.pyi")


def stub_tree():
    return ast.parse(STUBS.read_text())


def public(names):
    return {n for n in names if not n.startswith("_")}


def stub_parameters(fn: ast.FunctionDef):
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    for k, arg in enumerate(positional):
        out.append((arg.arg, "positional", k >= first_default))
    if a.vararg:
        out.append((a.vararg.arg, "var_positional", False))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword_only", default is not None))
    if a.kwarg:
        out.append((a.kwarg.arg, "var_keyword", False))
    return out


KINDS = {inspect.Parameter.POSITIONAL_ONLY: "positional", inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
         inspect.Parameter.VAR_POSITIONAL: "var_positional", inspect.Parameter.KEYWORD_ONLY: "keyword_only",
         inspect.Parameter.VAR_KEYWORD: "var_keyword"}


def runtime_parameters(fn):
    return [(p.name, KINDS[p.kind], p.default is not inspect.Parameter.empty)
            for p in inspect.signature(fn).parameters.values()]


def stub_definitions():
    tree = stub_tree()
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    return functions, classes


def test_the_stubs_name_every_public_name_and_nothing_else():
    functions, classes = stub_definitions()
    assert public(functions) | public(classes) == set(sprawling.__all__)


def test_functions_have_the_stubs_parameters():
    functions, _ = stub_definitions()
    for name, node in functions.items():
        if name.startswith("_"):
            continue
        assert stub_parameters(node) == runtime_parameters(getattr(sprawling, name)), name


def test_methods_have_the_stubs_parameters_and_async_where_the_stubs_say():
    _, classes = stub_definitions()
    for class_name, node in classes.items():
        if class_name.startswith("_"):
            continue
        cls = getattr(sprawling, class_name)
        stub_methods = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        runtime_methods = {n for n, v in vars(cls).items() if callable(v) or isinstance(v, property)}
        for method in public(runtime_methods) - {"__init__"}:
            assert method in stub_methods, f"{class_name}.{method} is missing from the stubs"
        for method, fn in stub_methods.items():
            value = inspect.getattr_static(cls, method)
            if isinstance(value, property):
                assert any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list), \
                    f"{class_name}.{method} is a property but the stubs declare a method"
                continue
            assert stub_parameters(fn) == runtime_parameters(value), f"{class_name}.{method}"
            assert isinstance(fn, ast.AsyncFunctionDef) == inspect.iscoroutinefunction(value), \
                f"{class_name}.{method}: async in one and not the other"


def test_dataclass_fields_are_the_stubs_attributes_in_order():
    _, classes = stub_definitions()
    for class_name, node in classes.items():
        cls = getattr(sprawling, class_name, None)
        if cls is None or not dataclasses.is_dataclass(cls):
            continue
        stub_fields = [n.target.id for n in node.body if isinstance(n, ast.AnnAssign)]
        assert stub_fields == [f.name for f in dataclasses.fields(cls)], class_name
