"""The version of the vaultd distribution: the daemon, the CLI and the shim ship together.

The one place it is written. setuptools reads it for the package metadata (a dynamic version in
pyproject.toml), the daemon reports it and the clients send it in ``hello``. A plain constant
rather than ``importlib.metadata``, whose import alone would slow every command's start.
"""

VERSION = "0.1.0"
