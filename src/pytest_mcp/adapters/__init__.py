"""Adapters, by the side they face: mcp/ (the clients), pytest_subprocess/ (a real pytest), fake/ (the double).

Beside them, what the sides share: pytest_options (the command line both runners describe),
concurrency_limit (the run slots every process takes) and structlog_logging.
"""
