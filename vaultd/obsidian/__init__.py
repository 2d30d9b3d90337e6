"""Obsidian's own layer, headless: what the app shows a person, answered from the index.

Settings under ``.obsidian/`` are read live and never written; property types, Bases evaluation,
tasks, daily notes and templates live here as pure rules over the index. Every write this layer
asks for goes through the one write path in :mod:`vaultd.ops`.
"""
