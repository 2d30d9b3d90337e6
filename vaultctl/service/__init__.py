"""Running vaultd under a service manager: systemd user units, a launchd user agent.

``vaultctl daemon install`` renders the files (:mod:`~vaultctl.service.units`) for the vaultd of
this installation (:mod:`~vaultctl.service.launch`), writes them reversibly with a record
(:mod:`~vaultctl.service.install`, :mod:`~vaultctl.service.record`), and the client reads that
record so it never starts a daemon beside the managed one. This package imports nothing from the
daemon.
"""
