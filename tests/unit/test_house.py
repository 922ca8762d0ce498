"""The house's structure (ADR 0019): no import circle, and each tool named once in the code."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

from pytest_mcp.adapters.mcp.tools import TOOLS

SRC = Path(__file__).resolve().parents[2] / "src" / "pytest_mcp"


def _circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each an import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in imports.get(module, ()):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others() -> None:
    """Imports for type checking and imports inside functions count too: a circle is a circle."""
    graph = grimp.build_graph("pytest_mcp")
    imports = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    assert len(imports) > 50
    assert _circles(imports) == []


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module that is not a docstring, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_each_tool_is_named_once_in_the_code() -> None:
    names = {tool.name for tool in TOOLS}
    assert len(names) == len(TOOLS) >= 4
    found: dict[str, list[str]] = {name: [] for name in names}
    for path in sorted(SRC.rglob("*.py")):
        for line, value in _string_constants(path):
            if value in names:
                found[value].append(f"{path.relative_to(SRC)}:{line}")
    assert {name: len(places) for name, places in found.items()} == dict.fromkeys(names, 1), found


def test_a_tool_is_its_request_type_and_its_class_and_no_other_source_file_lists_it() -> None:
    """A tool in at most 3 source files (issue 43): its request type (domain/requests.py) and its class (in
    adapters/mcp/tools.py, with TOOLS). The request-type union and the container's providers derive from
    TOOLS: on main they listed every tool, and the container named each tool's class. A tool with behaviour
    of its own (get_test_run's paging) has it in the domain too; last_failed, a selection, has none."""
    sources = {str(path.relative_to(SRC)): path.read_text(encoding="utf-8") for path in sorted(SRC.rglob("*.py"))}
    for tool in TOOLS:
        assert [path for path, text in sources.items() if tool.__name__ in text] == ["adapters/mcp/tools.py"]
    from pytest_mcp.adapters.mcp.tools import ToolRequest
    from pytest_mcp.domain.requests import ToolArguments

    assert ToolRequest is ToolArguments, "the tools' request type is their base, not a list of them"
    [last_failed] = [tool for tool in TOOLS if tool.name == "last_failed"]
    names = (last_failed.__name__, last_failed.request_type.__name__)
    assert [path for path, text in sources.items() if any(name in text for name in names)] == [
        "adapters/mcp/tools.py",
        "domain/requests.py",
    ]
