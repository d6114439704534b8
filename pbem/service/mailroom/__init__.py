"""The mail room: one stored incoming mail read once (:mod:`.incoming`), dispatched to the rooms
below (:mod:`.inbox`: each command by its type's handler, :mod:`.handlers`; :mod:`.threads` for
the game it answers and :mod:`.senders` for the name and notes it brings), the letters it made
queued (:mod:`.post`), and bounces told to the mails they return (:mod:`.bounces`)."""
