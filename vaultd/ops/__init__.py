"""Write operations, one module per method; each plans a change that the runner validates and applies."""
