"""Incident handling: SLA evaluation, incidents and their snapshots, reviews, cards, capacity."""
