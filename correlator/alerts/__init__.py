"""Alerts: incident messages rendered per chat platform, an outbox, a worker, silences."""
