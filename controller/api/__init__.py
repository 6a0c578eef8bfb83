"""The HTTP API and, later, the dealer and supervisor screens."""
