"""The mail room: one stored incoming mail dispatched to the rooms below (:mod:`.inbox`), the
letters it made queued, and bounces told to the mails they return (:mod:`.bounces`)."""
