"""Side-by-side benchmarks of vaultd on generated vaults; the entry point is ``benchmarks.run``."""
