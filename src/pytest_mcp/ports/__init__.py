"""The interfaces the use cases need from the outside world: one module per port."""
