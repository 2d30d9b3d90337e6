"""The descriptor limit: raised from the soft to the hard limit at start.

Each connection costs a descriptor, and so do the vault watchers, index caches and journal
files. Login sessions often start with a soft limit of 1024 under a much higher hard one; the
daemon may raise its own soft limit to the hard one without privileges, so it does, and the
connection cap (``max_connections``) is what bounds clients, not an accident of the session.
"""

from __future__ import annotations

import resource

#: where the hard limit is "unlimited" (the kernel still caps descriptors at nr_open)
UNLIMITED_TARGET = 1 << 20


def raise_fd_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard one where the system allows; the limits after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    for candidate in (target, 65536, 10240):  # macOS refuses more than OPEN_MAX
        if candidate <= soft:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (candidate, hard))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)
