"""The agent gate: what an agent may apply, what waits for a person as a proposal, and the proposals."""
