"""The registry: the vaults config.json names, and the limits and policies it sets."""
