"""Persistence: sqlmodel tables, the engine, sessions and the schema version."""
