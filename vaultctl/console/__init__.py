"""The web console: a small local web app for a person, run as a child process of the daemon.

It is a client of the daemon's socket on the ``editor`` channel, like ``vaultctl`` on ``cli``:
every view is a read method and every action a method of the protocol table, so the console has
no write path and no privilege of its own. ``vaultctl console`` asks the daemon to start it
(``console.open``); the daemon runs ``python -m vaultctl.console`` and never imports this package.
"""
