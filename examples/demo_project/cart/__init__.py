"""A small shop's cart: what the demo's tests check."""
