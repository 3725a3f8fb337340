"""causeline: one timeline for ML serving incidents."""
