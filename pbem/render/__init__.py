"""Everything a player sees: the text board, the board picture and the Jinja2 texts."""
