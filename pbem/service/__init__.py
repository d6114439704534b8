"""The game service: turns a stored incoming mail into state changes and answers."""

from pbem.service.inbox import handle_mail

__all__ = ["handle_mail"]
