"""The link graph as pure functions over the index: one resolved snapshot of every link
(:mod:`~vaultd.graph.snapshot`), walks (neighbourhoods and paths), communities (Leiden through
igraph and leidenalg, imported on first use), hubs and maps of content, the topic map and its
navigator, and a neighbourhood drawn as a JSON Canvas. Nothing here writes a file."""
