"""Watching: friends who watch a game, their commands and the read-only mails they get."""
