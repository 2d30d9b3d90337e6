"""Journal volumes: folders of dated entries, gathered and published by a person as edition notes."""
