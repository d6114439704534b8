"""Pages: what a browser is shown and may do (the game's web board, the personal page, the
tournament and ladder pages) and the operator's reports (``pbem games``, ``status``, ``export``)."""
