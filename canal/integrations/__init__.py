"""Doors onto canal from other frameworks (the LangGraph Server entry, ...)."""
