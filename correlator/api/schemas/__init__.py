"""The request and response bodies of the API, one module per domain object."""
