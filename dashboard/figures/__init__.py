"""Pure figure builders: data in, Plotly figures out; no I/O."""
