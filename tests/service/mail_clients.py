"""Replies as real mail clients write them, around a real service mail.

Each builder quotes the mail the player actually received (its board, identifiers and example
move included) the way that client does, so a test shows that only the new text is applied.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from post_office import text_of


def _reply_headers(sender: str, original: EmailMessage, prefix: str = "Re") -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = str(original["Reply-To"])
    message["Subject"] = f"{prefix}: {original['Subject']}"
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain="mail.example.org")
    message["In-Reply-To"] = str(original["Message-ID"])
    message["References"] = " ".join([*str(original.get("References", "")).split(), str(original["Message-ID"])])
    return message


def _quoted(text: str) -> str:
    return "".join(f"> {line}\n" if line else ">\n" for line in text.rstrip("\n").split("\n"))


def _html_lines(text: str) -> str:
    return "<br>\n".join(html.escape(line).replace("  ", "&nbsp; ") for line in text.rstrip("\n").split("\n"))


def _from(original: EmailMessage) -> str:
    return str(original["From"])


def gmail(sender: str, original: EmailMessage, new: str, german: bool = False) -> EmailMessage:
    """Top-posted, text and HTML; the HTML quote is a gmail_quote blockquote."""
    message = _reply_headers(sender, original, "AW" if german else "Re")
    attribution = (f"Am Sa., 21. Nov. 2026 um 21:42 Uhr schrieb {_from(original)}:" if german
                   else f"On Sat, Nov 21, 2026 at 9:42 PM {_from(original)} wrote:")
    message.set_content(f"{new}\n\n{attribution}\n\n{_quoted(text_of(original))}")
    message.add_alternative(
        f'<div dir="ltr">{_html_lines(new)}</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
        f'{html.escape(attribution)}<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
        f'border-left:1px solid rgb(204,204,204);padding-left:1ex">{_html_lines(text_of(original))}'
        "</blockquote></div>\n", subtype="html")
    return message


def outlook_html_only(sender: str, original: EmailMessage, new: str, german: bool = False) -> EmailMessage:
    """Outlook on the web: HTML only, the original below a divRplyFwdMsg header block, unquoted."""
    message = _reply_headers(sender, original, "AW" if german else "RE")
    labels = ("Von", "Gesendet", "An", "Betreff") if german else ("From", "Sent", "To", "Subject")
    block = "<br>".join(f"<b>{label}:</b> {html.escape(value)}" for label, value in zip(
        labels, (_from(original), "Samstag, 21. November 2026 21:42" if german else "Saturday, November 21, 2026 9:42 PM",
                 str(original["To"]), str(original["Subject"]))))
    message.set_content(
        f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head><body dir="ltr">'
        f'<div style="font-family: Calibri, Arial, Helvetica, sans-serif; font-size: 12pt;">{_html_lines(new)}</div>'
        '<div id="appendonsend"></div><hr style="display:inline-block;width:98%" tabindex="-1">'
        f'<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt">{block}</font>'
        f'<div>&nbsp;</div></div><div><pre>{html.escape(text_of(original))}</pre></div></body></html>\n',
        subtype="html")
    return message


def outlook_desktop_german(sender: str, original: EmailMessage, new: str) -> EmailMessage:
    """Outlook on Windows, plain text: the German header block, the original unquoted below."""
    message = _reply_headers(sender, original, "AW")
    message.set_content(
        f"{new}\n\nMit freundlichen Grüßen\nJürgen\n\n"
        f"Von: {_from(original)}\nGesendet: Samstag, 21. November 2026 21:42\nAn: {original['To']}\n"
        f"Betreff: {original['Subject']}\n\n{text_of(original)}")
    return message


def apple_mail(sender: str, original: EmailMessage, new: str, german: bool = False) -> EmailMessage:
    """Apple Mail on an iPhone: top-posted, the signature, and a '>'-quoted attribution and body."""
    message = _reply_headers(sender, original, "AW" if german else "Re")
    signature = "Von meinem iPhone gesendet" if german else "Sent from my iPhone"
    attribution = (f"Am 21.11.2026 um 21:42 schrieb {_from(original)}:" if german
                   else f"On Nov 21, 2026, at 9:42 PM, {_from(original)} wrote:")
    message.set_content(f"{new}\n\n{signature}\n\n> {attribution}\n> \n{_quoted(text_of(original))}")
    return message


def thunderbird_bottom_posted(sender: str, original: EmailMessage, new: str, german: bool = False) -> EmailMessage:
    """Thunderbird's default: the attribution and the quote first, the answer below it."""
    message = _reply_headers(sender, original, "AW" if german else "Re")
    attribution = (f"Am 21.11.26 um 21:42 schrieb {_from(original)}:" if german
                   else f"On 21/11/2026 21:42, {_from(original)} wrote:")
    message.set_content(f"{attribution}\n{_quoted(text_of(original))}\n{new}\n\n-- \nBen Example\n")
    return message


def html_only(sender: str, original: EmailMessage, new: str) -> EmailMessage:
    """A webmail that sends HTML alone, with the original in a cite blockquote."""
    message = _reply_headers(sender, original)
    message.set_content(
        f"<html><body><p>{_html_lines(new)}</p><blockquote type=\"cite\">{_html_lines(text_of(original))}"
        "</blockquote></body></html>\n", subtype="html")
    return message


Client = Callable[[str, EmailMessage, str], EmailMessage]

CLIENTS: dict[str, Client] = {
    "gmail": gmail,
    "gmail_de": lambda s, o, n: gmail(s, o, n, german=True),
    "outlook_html_only": outlook_html_only,
    "outlook_html_only_de": lambda s, o, n: outlook_html_only(s, o, n, german=True),
    "outlook_desktop_de": outlook_desktop_german,
    "apple_mail": apple_mail,
    "apple_mail_de": lambda s, o, n: apple_mail(s, o, n, german=True),
    "thunderbird": thunderbird_bottom_posted,
    "thunderbird_de": lambda s, o, n: thunderbird_bottom_posted(s, o, n, german=True),
    "html_only": html_only,
}
