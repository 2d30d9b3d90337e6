"""The web console's process, as the daemon starts, asks and stops it (the console itself is a
client of the socket and lives in ``vaultctl.console``)."""
