"""Generated views: the Markdown of each view, and the mark that tells vaultd's own copy from a
person's edit (pure functions; the operation that writes them is :mod:`vaultd.ops.view_refresh`)."""
