"""The shared process: SLA evaluation, incidents, cards, capacity and reviews."""
