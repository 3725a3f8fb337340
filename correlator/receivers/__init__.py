"""Decoders for metrics pushed in other systems' wire formats (remote write, OTLP)."""
