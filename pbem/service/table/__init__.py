"""The table: a match loaded for play (:mod:`.tables`), its dice, clocks and the Assistant's seat,
and the conversation of one mail: the news its commands record (:mod:`.news`,
:mod:`.conversation`) and how the letters word it (:mod:`.letters`).  Every other room builds on
this one; it imports none of them."""
