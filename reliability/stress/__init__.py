"""Long-running stress drivers for vaultd: concurrency, hostile input, load."""
