"""A vault's events: its clock, the events it retains for ``since``, and the wakers of those who follow it."""
