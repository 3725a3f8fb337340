"""Dash pages; each module has ``register(app, ctx)`` adding its page and callbacks."""
