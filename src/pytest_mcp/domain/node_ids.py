"""Node ids, taken apart the way pytest takes them apart."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NodeId:
    """A node id as pytest prints it: `path::Class::test_name[parameters]`.

    The path ends at the first `::`. The names follow, separated by `::`, up to the first `[`:
    a parameter id is free text and may itself hold `::` (`test_z[a::b]`).
    """

    text: str
    path: str
    names: tuple[str, ...]
    parameters: str = ""

    @classmethod
    def parse(cls, text: str) -> NodeId:
        path, _, rest = text.partition("::")
        names, bracket, parameters = rest.partition("[")
        return cls(text, path, tuple(names.split("::")) if names else (), bracket + parameters)

    @property
    def module(self) -> str:
        """The file name of the module, without its directories."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def function(self) -> str:
        """The test's own name, without classes or parameters (what faulthandler prints); the module for a file."""
        return self.names[-1] if self.names else self.module

    @property
    def named(self) -> tuple[str, ...]:
        """The names with the parameter id on the last one, as pytest's keywords see them."""
        if not self.names:
            return (self.module + self.parameters,)
        return (*self.names[:-1], self.names[-1] + self.parameters)


def argument_paths(argument: str) -> frozenset[str]:
    """The path part of a command-line argument, as each supported pytest reads it.

    pytest 8 and 9 cut an argument at its first `[` and then at `::`; pytest 7 at `::` alone,
    and so does the lookup of initial conftests in every version. A check of where an argument
    leads must hold for each reading (architecture/security.md, row 4).
    """
    return frozenset({argument.split("::", 1)[0], argument.partition("[")[0].split("::", 1)[0]})
