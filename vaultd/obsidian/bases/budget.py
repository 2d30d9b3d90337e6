"""The work one query may do: evaluation steps and wall time, counted as it goes.

Every expression charges its size each time it runs, and every element a list method walks
charges its body's size, so the count follows the real work (a ``map`` inside a ``map`` over long
lists costs what it does). The clock is read every few thousand steps, not at each one.
"""

from __future__ import annotations

import time
from typing import Final

__all__ = ["MAX_QUERY_SECONDS", "MAX_STEPS", "Budget", "BudgetExceeded"]

MAX_STEPS: Final = 20_000_000  #: nodes evaluated in one query: 2,000 per row at 10,000 rows
MAX_QUERY_SECONDS: Final = 10.0
_CLOCK_EVERY: Final = 4096


class BudgetExceeded(Exception):
    """The query passed its step or time budget; the message says which."""


class Budget:
    __slots__ = ("deadline", "max_steps", "next_clock", "steps")

    def __init__(self, max_steps: int = MAX_STEPS, seconds: float = MAX_QUERY_SECONDS) -> None:
        self.steps = 0
        self.max_steps = max_steps
        self.deadline = time.monotonic() + seconds
        self.next_clock = min(_CLOCK_EVERY, max_steps + 1)

    def charge(self, steps: int) -> None:
        self.steps += steps
        if self.steps >= self.next_clock:
            if self.steps > self.max_steps:
                raise BudgetExceeded(f"the query took more than {self.max_steps} evaluation steps")
            self.next_clock = min(self.steps + _CLOCK_EVERY, self.max_steps + 1)
            if time.monotonic() > self.deadline:
                raise BudgetExceeded("the query ran past its time budget")
