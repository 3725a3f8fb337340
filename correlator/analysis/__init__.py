"""Correlation analysis: one timeline, SLA breach, drift and the ranking of suspects."""
