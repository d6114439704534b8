"""The board on the web (issue 15): routes, CSRF, limits and headers; the game is the service's."""
