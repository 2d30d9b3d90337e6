"""vaultd's long reliability suites: crash injection, lost writes below the process and faults
through the real system (this folder), and the stress drivers (``stress/``: concurrency, hostile
input, load). See docs/reliability.md for the commands, what each checks, and the figures."""
