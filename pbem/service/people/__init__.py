"""Invitations and accounts: inviting and answering, the rematch, and the commands about the
player rather than one game (language, numbering, vacation, games list, help, stop)."""
