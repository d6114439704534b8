"""Jobs: the daemon's periodic work, apart from any mail: clocks and their alarms, lapsed ladder
challenges, the reviews of finished games, and retention."""
