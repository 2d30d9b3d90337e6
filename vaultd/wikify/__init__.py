"""Wikify: links suggested where a note names another note (its name or an alias), as Obsidian reads a link."""
