"""Agent sessions as records (kept in vaultd's home) and work documents (kept in each vault's
state folder): what an agent did and is doing, for the person to see and the agent to resume."""
