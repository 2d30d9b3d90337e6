"""Transactions: plans, the journal, applying and recovering, through directory descriptors."""
