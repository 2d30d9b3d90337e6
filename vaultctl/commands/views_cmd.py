"""views: bring a vault's generated views up to date now, and say which ones a person edited.

vaultd keeps them current by itself a moment after what they show changes; this is for the
person who wants it now, or wants to know why a view stopped changing (it was edited by hand).
"""

from __future__ import annotations

from protocol.methods import views
from protocol.methods.views import ViewRefreshParams
from vaultctl.commands.write_command import WriteFlags, write_command


@write_command(views.VIEW_REFRESH)
def views_refresh(*, flags: WriteFlags[ViewRefreshParams]) -> None:
    """Regenerate the vault's generated views now; a view edited by hand is left alone and named."""
    flags.run(lambda steering: ViewRefreshParams(**steering))
