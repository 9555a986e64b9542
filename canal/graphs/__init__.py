"""Spec -> LangGraph ``StateGraph``."""
