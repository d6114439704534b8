"""Competitions: knockout tournaments (opening, joining, seeding, pairings, round mails) and
ladders (joining, challenges, the standing's commands); their matches are played by :mod:`..games`."""
