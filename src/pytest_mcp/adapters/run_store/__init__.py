"""Run stores (ADR 0014): in this process's memory, or in Redis, shared by every instance."""
