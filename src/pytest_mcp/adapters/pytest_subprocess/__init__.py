"""The real runner: pytest in a subprocess of the target interpreter, in its own process group."""
