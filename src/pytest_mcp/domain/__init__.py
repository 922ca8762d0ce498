"""The pure core: request and result models, errors and use cases. No I/O frameworks live here."""
