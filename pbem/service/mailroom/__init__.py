"""The mail room: one stored incoming mail dispatched to the rooms below (:mod:`.inbox`, each
command by its type's handler, :mod:`.handlers`), the letters it made queued, and bounces told
to the mails they return (:mod:`.bounces`)."""
