"""Legal plays for a roll, and validation of a stated play with a reason a player understands.

Interface (implemented by the rules-core work; see issue 2):

* ``Step = tuple[int, int]``: one checker moved ``(from_point, to_point)`` in the mover's own
  numbering, ``25`` = the bar, ``0`` = off.
* ``Play = tuple[Step, ...]``: the steps of one turn, in the order played.
* ``legal_plays(position, dice) -> dict[Position, Play]``: every distinct resulting position
  (still seen from the mover) with one play that reaches it; ``{}`` when nothing can be played.
* ``apply_step(position, step) -> Position`` and ``apply_play(position, play) -> Position``.
* ``check_play(position, dice, steps) -> Position``: the resulting position when the stated
  steps reach a legal position, else raises ``IllegalPlay`` carrying a machine-readable
  ``code`` and ``details`` (to be worded in the player's language by the templates).
"""
