"""Checkouts: copies of notes edited outside the vault, returned as one proposal merged three ways."""
