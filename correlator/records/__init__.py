"""Typed records shared by the bundle reader, the store and the API."""
