"""Run stores (ADR 0016): in this process's memory, or in Redis, shared by every instance."""
