"""Games and matches: the game commands applied through the rules core (:mod:`.play`), and what
a result changes beyond the match: ratings, credits (the ledger), a ladder's standing."""
