"""The operator's configuration (SPEC §5): a TOML file read into frozen pydantic models.

Every key is validated when the file is loaded, so that a typo stops the daemon at start with a
message naming the file and the key (``FILE: [table] key: problem``), instead of surfacing
hours later in a mail job.  Passwords are ``SecretStr``: they never show in a repr or a log.

The duration grammar (``3d``, ``12h``, ``90m``; ``t`` for German *Tage*) is the one players use
in ``clock 3d/14d``: :func:`parse_duration` serves both.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, SecretStr, ValidationError, ValidationInfo, field_validator,
                      model_validator)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from pbem.addresses import is_plain_address
from pbem.rules import prizes
from pbem.rules.scoring import DEFAULT_CUBE_CAP

EMBEDDED_DEFAULT = "<embedded default>"
DEFAULT_POLL_INTERVAL = 60.0
LANGUAGES = ("de", "en")
DATA_DIR_VARIABLE = "PBEM_DATA_DIR"
WEB_PORT_VARIABLE = "PBEM_WEB_PORT"
DEFAULT_WEB_PORT = 8080
SECURITY_MODES = ("ssl", "starttls", "none")
IMAP_PORTS = {"ssl": 993, "starttls": 143, "none": 143}
SMTP_PORTS = {"ssl": 465, "starttls": 587, "none": 25}

DURATION_PATTERN = r"(\d{1,5})([dthm])"
_DURATION = re.compile(rf"\s*{DURATION_PATTERN}\s*", re.IGNORECASE)
_DURATION_UNITS = {"d": "days", "t": "days", "h": "hours", "m": "minutes"}
_HOST = re.compile(r"[A-Za-z0-9.:\[\]-]+")
_DOMAIN = re.compile(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}")
_DKIM_SELECTOR = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*")
_AUTHSERV_ID = re.compile(r"[!#-'*+.0-9A-Z^-~-]{1,255}")
"""A token of RFC 2045 (what Authentication-Results allows unquoted): a host name in practice."""


def _host(value: str) -> str:
    if not _HOST.fullmatch(value):
        raise ValueError(f"must be a host name or IP address, got {value!r}")
    return value


def _port(value: int) -> int:
    if not 1 <= value <= 65535:
        raise ValueError(f"must be a port number from 1 to 65535, got {value!r}")
    return value


Host = Annotated[str, AfterValidator(_host)]
"""A host name or IP address (a mail server, or the address the web board listens on)."""
Port = Annotated[int, AfterValidator(_port)]
_PASSWORD_KEYS = ("password", "password_env", "password_file")


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and the key."""


class KeyProblem(ValueError):
    """A problem found by a check of a whole table, naming the key it is about."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key
        self.problem = problem


def parse_duration(text: str) -> timedelta:
    """Read a duration such as `3d`, `12h`, `90m` or `5t` (the spelling of `clock 3d/14d`)."""
    match = _DURATION.fullmatch(text)
    if not match:
        raise ValueError(f"not a duration like 3d, 12h or 90m: {text!r}")
    return timedelta(**{_DURATION_UNITS[match.group(2).lower()]: int(match.group(1))})


def is_mail_address(text: str) -> bool:
    """True for a bare address `local@domain` (no display name, no angle brackets)."""
    return is_plain_address(text)


def _one_line(text: str) -> bool:
    return text.strip() != "" and "\n" not in text and "\r" not in text


class _Table(BaseModel):
    """One TOML table: unknown keys refused, values of exactly the right TOML type."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _positive_duration(value: object) -> timedelta:
    """A TOML string like "3d" → timedelta (longer than zero)."""
    if not isinstance(value, str):
        raise ValueError(f"must be a duration like 3d, 12h or 90m, got {value!r}")
    try:
        duration = parse_duration(value)
    except ValueError:
        raise ValueError(f"must be a duration like 3d, 12h or 90m, got {value!r}") from None
    if duration <= timedelta(0):
        raise ValueError(f"must be longer than zero, got {value!r}")
    return duration


class ServiceConfig(_Table):
    address: str = "backgammon@localhost"
    name: str = "Backgammon by Mail"
    language: str = "en"
    data_dir: Path = Field(default_factory=lambda: Path(os.environ.get(DATA_DIR_VARIABLE) or "pbem-data")
                           .expanduser().absolute())
    """Without a config file (or ``data_dir`` in it): ``$PBEM_DATA_DIR``, else ``./pbem-data``."""

    @field_validator("address")
    @classmethod
    def _address(cls, value: str) -> str:
        if not is_mail_address(value):
            raise ValueError(f"must be a mail address like backgammon@example.org, got {value!r}")
        return value

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise ValueError(f"must be {' or '.join(LANGUAGES)}, got {value!r}")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _one_line(value):
            raise ValueError(f"must be a non-empty name on one line, got {value!r}")
        return value

    @field_validator("data_dir", mode="before")
    @classmethod
    def _data_dir(cls, value: object) -> Path:
        if isinstance(value, Path):
            return value
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"must be a directory path, got {value!r}")
        return Path(value).expanduser().absolute()


class DatabaseConfig(_Table):
    url: str
    retention_days: int = 30
    """The raw text of a finished game's mails (and of mails of no game) is dropped this many
    days later; results, the .mat and the Message-IDs stay."""

    @field_validator("retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        if not 1 <= value <= 36500:
            raise ValueError(f"must be a number of days from 1 to 36500, got {value!r}")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        try:
            make_url(value)
        except ArgumentError:
            raise ValueError(f"not an SQLAlchemy database URL: {value!r}") from None
        return value


class _MailServer(_Table):
    """What IMAP and SMTP share: host, port (by default the one of the security mode), login."""

    host: Host
    port: Port
    security: str
    username: str | None = None
    password: SecretStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _defaults_and_password(cls, values: Any, info: ValidationInfo) -> Any:
        """Exactly one of `password`, `password_env`, `password_file` becomes the password (read
        only when the command needs the mail servers: see :func:`load_config`)."""
        if not isinstance(values, dict):
            return values
        values = dict(values)
        security = values.setdefault("security", cls._default_security())
        if security not in SECURITY_MODES:
            raise KeyProblem("security", f"must be {' | '.join(SECURITY_MODES)}, got {security!r}")
        values.setdefault("port", cls._default_port(security))
        given = [key for key in _PASSWORD_KEYS if key in values]
        if len(given) > 1:
            raise KeyProblem(given[1], f"give only one of {', '.join(_PASSWORD_KEYS)} (also {given[0]})")
        if given and given[0] != "password":
            key = given[0]
            source = values.pop(key)
            if not isinstance(source, str):
                raise KeyProblem(key, f"must be a string, got {source!r}")
            read = not (info.context or {}).get("without_mail_secrets")
            values["password"] = SecretStr(_read_password(key, source) if read else "")
        elif given and isinstance(values["password"], str):
            values["password"] = SecretStr(values["password"])
        return values

    @classmethod
    def _default_security(cls) -> str:
        raise NotImplementedError

    @classmethod
    def _default_port(cls, security: str) -> int:
        raise NotImplementedError


def _read_password(key: str, source: str) -> str:
    if key == "password_env":
        if source not in os.environ:
            raise KeyProblem(key, f"the environment variable {source} is not set")
        return os.environ[source]
    try:
        return Path(source).expanduser().read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as exc:
        raise KeyProblem(key, f"cannot read {source}: {exc.strerror}") from None


class ImapConfig(_MailServer):
    username: str  # required for IMAP, optional for SMTP
    password: SecretStr  # required for IMAP, optional for SMTP
    mailbox: str = "INBOX"
    poll_interval: float = DEFAULT_POLL_INTERVAL
    idle: bool = True
    trusted_authserv_id: str | None = None
    """The authserv-id of the operator's own mail server: its ``Authentication-Results`` header
    saying ``dmarc=pass`` (or an aligned ``dkim=pass``) for the From domain proves the sender,
    and a new mail then needs no "please confirm" round trip (``pbem.mail.authentication``)."""

    @field_validator("trusted_authserv_id")
    @classmethod
    def _authserv_id(cls, value: str | None) -> str | None:
        if value is not None and not _AUTHSERV_ID.fullmatch(value):
            raise ValueError("must be the authserv-id your mail server writes first in its "
                             f"Authentication-Results header, like mx.example.org, got {value!r}")
        return value

    @classmethod
    def _default_security(cls) -> str:
        return "ssl"

    @classmethod
    def _default_port(cls, security: str) -> int:
        return IMAP_PORTS[security]

    @field_validator("username")
    @classmethod
    def _username(cls, value: str) -> str:
        if not value:
            raise ValueError("must be a non-empty user name, got ''")
        return value

    @field_validator("mailbox")
    @classmethod
    def _mailbox(cls, value: str) -> str:
        if not _one_line(value):
            raise ValueError(f"must be a mailbox name, got {value!r}")
        return value

    @field_validator("poll_interval")
    @classmethod
    def _poll_interval(cls, value: float) -> float:
        if not 1 <= value <= 86400:
            raise ValueError(f"must be a number of seconds from 1 to 86400, got {value!r}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _password_given(cls, values: Any) -> Any:
        if isinstance(values, dict) and not any(key in values for key in _PASSWORD_KEYS):
            raise KeyProblem("password", "missing: give password, password_env or password_file")
        return values


class SmtpConfig(_MailServer):
    dkim_selector: str | None = None
    """With ``dkim_key_file``: every mail is DKIM-signed with that key under this selector (its
    public key is published as ``SELECTOR._domainkey.DOMAIN``)."""
    dkim_key_file: Path | None = None
    """A PEM private key, RSA or Ed25519; read when the daemon starts (``pbem.mail.dkim``)."""
    dkim_domain: str | None = None
    """The signing domain (``d=``); by default the domain of ``[service] address``."""

    @classmethod
    def _default_security(cls) -> str:
        return "starttls"

    @field_validator("dkim_selector")
    @classmethod
    def _selector(cls, value: str | None) -> str | None:
        if value is not None and not _DKIM_SELECTOR.fullmatch(value):
            raise ValueError(f"must be a DKIM selector like mail2026 (letters, digits, - and dots), got {value!r}")
        return value

    @field_validator("dkim_domain")
    @classmethod
    def _signing_domain(cls, value: str | None) -> str | None:
        if value is not None and not _DOMAIN.fullmatch(value):
            raise ValueError(f"must be a domain like example.org, got {value!r}")
        return value

    @field_validator("dkim_key_file", mode="before")
    @classmethod
    def _key_file(cls, value: object) -> Path:
        if isinstance(value, Path):
            return value
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"must be the path of a PEM private key file, got {value!r}")
        return Path(value).expanduser().absolute()

    @model_validator(mode="after")
    def _dkim_complete(self) -> SmtpConfig:
        """Selector and key file together, or neither: one alone would sign nothing, silently."""
        if self.dkim_selector is not None and self.dkim_key_file is None:
            raise KeyProblem("dkim_key_file", "missing: dkim_selector is given, so the private key file "
                             "to sign with is needed")
        if self.dkim_key_file is not None and self.dkim_selector is None:
            raise KeyProblem("dkim_selector", "missing: dkim_key_file is given, so the selector its "
                             "public key is published under is needed")
        if self.dkim_domain is not None and self.dkim_selector is None:
            raise KeyProblem("dkim_domain", "is used only for DKIM signing: give dkim_selector and "
                             "dkim_key_file too, or leave it out")
        return self

    @classmethod
    def _default_port(cls, security: str) -> int:
        return SMTP_PORTS[security]

    @model_validator(mode="after")
    def _login_complete(self) -> SmtpConfig:
        if self.username is not None and self.password is None:
            raise KeyProblem("password", "missing: give password, password_env or password_file")
        if self.password is not None and self.username is None:
            raise KeyProblem("username", "missing: a password is given, so a user name is needed")
        return self


class GameConfig(_Table):
    cube_cap: int = DEFAULT_CUBE_CAP
    move_clock: timedelta = timedelta(days=3)
    time_bank: timedelta = timedelta(days=14)
    vacation_days_per_year: int = 30

    @field_validator("move_clock", "time_bank", mode="before")
    @classmethod
    def _durations(cls, value: object) -> timedelta:
        return value if isinstance(value, timedelta) else _positive_duration(value)

    @field_validator("cube_cap")
    @classmethod
    def _cube_cap(cls, value: int) -> int:
        if value < 2 or value & (value - 1):
            raise ValueError(f"must be a power of two from 2 upwards, got {value!r}")
        return value

    @field_validator("vacation_days_per_year")
    @classmethod
    def _vacation(cls, value: int) -> int:
        if not 0 <= value <= 366:
            raise ValueError(f"must be a number of days from 0 to 366, got {value!r}")
        return value


class LimitsConfig(_Table):
    max_mail_bytes: int = 2_000_000
    invitations_per_day: int = 10
    """Invitations one player may send in 24 hours."""
    invitations_received_per_day: int = 3
    """Invitations one address may receive in 24 hours, from all senders together."""
    confirmations_per_day: int = 3
    """Unanswered "please confirm" mails one address may get in 24 hours (a mail without a token
    that holds account commands or an invitation asks its sender to confirm); further ones are
    dropped, so that forged mails never flood the address they name."""
    give_up_after: timedelta = timedelta(days=3)
    """An answer the mail server still refuses after this long is given up (and logged)."""
    bounce_limit: int = 3
    """Permanent bounces after which an address gets no more mail until its owner writes (0: never stop)."""

    @field_validator("give_up_after", mode="before")
    @classmethod
    def _durations(cls, value: object) -> timedelta:
        return value if isinstance(value, timedelta) else _positive_duration(value)

    @field_validator("max_mail_bytes")
    @classmethod
    def _max_mail_bytes(cls, value: int) -> int:
        if value < 1024:
            raise ValueError(f"must be a number of bytes of at least 1024, got {value!r}")
        return value

    @field_validator("invitations_per_day", "invitations_received_per_day", "confirmations_per_day")
    @classmethod
    def _invitations(cls, value: int) -> int:
        if value < 0:
            raise ValueError(f"must be a number of invitations, 0 or more, got {value!r}")
        return value

    @field_validator("bounce_limit")
    @classmethod
    def _bounce_limit(cls, value: int) -> int:
        if value < 0:
            raise ValueError(f"must be a number of bounces, 0 or more, got {value!r}")
        return value


class AssistantConfig(_Table):
    plies: int = 2
    """bgsage's search depth for the Assistant and the review: 2 (the Assistant's cube decisions
    and close plays searched at 3) plays at about 1 mEMG as GNU Backgammon judges it and answers
    within 0.14 to 0.46 s (p95, while a review runs on a busy 2-core machine; 60 ms of CPU on
    average); 1 answers in milliseconds at about 4 mEMG (``bench/assistant_bench.py``,
    docs/development.md's table)."""

    @field_validator("plies")
    @classmethod
    def _plies(cls, value: int) -> int:
        if not 1 <= value <= 4:
            raise ValueError(f"must be a number of plies from 1 to 4, got {value!r}")
        return value


def _default_web_port() -> int:
    """``$PBEM_WEB_PORT``, else 8080: so that several daemons on one host may differ without a file."""
    value = os.environ.get(WEB_PORT_VARIABLE) or str(DEFAULT_WEB_PORT)
    if not value.isdigit():
        raise ConfigError(f"the environment variable {WEB_PORT_VARIABLE} must be a port number, got {value!r}")
    return int(value)


class WebConfig(_Table):
    """The board on the web: ``pbem serve`` serves it, also without a ``[web]`` table (on
    127.0.0.1, port 8080), unless ``enabled = false``."""

    enabled: bool = True
    """False: no web board, and the mails carry no link."""
    bind: Host = "127.0.0.1"
    port: Port = Field(default_factory=_default_web_port)
    base_url: str = ""
    """The address players open, as the reverse proxy publishes it (``https://bg.example.org``);
    empty: ``http://BIND:PORT``.  Every game mail links to ``BASE_URL/g/<token>``."""
    trusted_proxies: tuple[str, ...] = ()
    """Addresses of reverse proxies whose ``X-Forwarded-For`` names the client (for the limits
    per address); a request from any other address is counted under its own address."""
    requests_per_minute: int = 60
    """Pages and forms one game link may ask for in a minute."""
    polls_per_minute: int = 120
    """The page's polls for news (``GET /g/<token>/state``) one game link may make in a minute,
    counted apart, so that open tabs never use up the budget of a move; one tab polls 12 times."""
    address_requests_per_minute: int = 600
    """Requests one client address may make in a minute, over all links."""

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        if value and not re.fullmatch(r"https?://[A-Za-z0-9.:\[\]-]+(/[A-Za-z0-9._~/-]*)?", value):
            raise ValueError(f"must be an http:// or https:// address like https://bg.example.org, got {value!r}")
        return value.rstrip("/")

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _proxies(cls, value: object) -> tuple[str, ...]:
        """IP addresses (``10.0.0.1``) or networks (``10.0.0.0/8``), checked here: a host name
        would never match a peer's address, and the limit per address would count the proxy."""
        if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
            raise ValueError(f"must be a list of IP addresses or networks like [\"127.0.0.1\", \"10.0.0.0/8\"], "
                             f"got {value!r}")
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or network (like \"127.0.0.1\" or "
                                 "\"10.0.0.0/8\"; host names are not allowed)") from None
        return tuple(value)

    @model_validator(mode="after")
    def _reachable_links(self) -> WebConfig:
        """Listening on every address (``0.0.0.0``, ``::``) says nothing about the address players
        open: without ``base_url`` the mails would link to ``http://0.0.0.0:PORT``."""
        if self.enabled and not self.base_url and self.bind in ("0.0.0.0", "::", "[::]"):
            raise KeyProblem("base_url", f"is needed with bind = {self.bind!r}: the mails would link to "
                             f"{self.public_url}, which no browser can open; set base_url to the address "
                             "players open (like \"http://bg.example.org:8080\")")
        return self

    def trusts(self, address: str) -> bool:
        """Whether ``address`` is one of the trusted proxies (an address or inside a network)."""
        try:
            peer = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(peer in ipaddress.ip_network(proxy, strict=False) for proxy in self.trusted_proxies)

    @field_validator("requests_per_minute", "polls_per_minute", "address_requests_per_minute")
    @classmethod
    def _rate(cls, value: int) -> int:
        if not 1 <= value <= 100_000:
            raise ValueError(f"must be a number of requests from 1 to 100000, got {value!r}")
        return value

    @property
    def public_url(self) -> str:
        """The address links point to: ``base_url``, else the address the server listens on."""
        host = f"[{self.bind}]" if ":" in self.bind else self.bind
        return self.base_url or f"http://{host}:{self.port}"

    def link(self, token: str) -> str:
        """A player's link to their game's page."""
        return f"{self.public_url}/g/{token}"

    def games_link(self, page_token: str) -> str:
        """A player's link to their own page of all their games."""
        return f"{self.public_url}/p/{page_token}"

    def tournament_link(self, code: str, page_token: str) -> str:
        """A player's own link to a tournament's page (their matches link to their games)."""
        return f"{self.public_url}/t/{code}/{page_token}"

    def unsubscribe_link(self, unsubscribe_token: str) -> str:
        """An address's one-click link to stop invitations (``List-Unsubscribe``, RFC 8058)."""
        return f"{self.public_url}/u/{unsubscribe_token}"
def _amount(value: object) -> Decimal:
    """A TOML number or string → an amount of credits (ValueError unless at most two places)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"must be an amount like 2.50, got {value!r}")
    return prizes.amount(value)


def _positive_amounts(values: object) -> tuple[Decimal, ...]:
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"must be a list of amounts like [2.50, 5], got {values!r}")
    amounts = tuple(_amount(value) for value in values)
    if any(value <= 0 for value in amounts):
        raise ValueError(f"every amount must be more than zero, got {values!r}")
    return amounts


class CreditsConfig(_Table):
    """Play money for prize games (seed 004's values by default): no purchase, no payout."""

    start: Decimal = Decimal("100.00")
    """What every new account is granted."""
    fee_percent: Decimal = Decimal(10)
    """The house's share of what a prize game pays out (of each stake on a tie)."""
    stakes: tuple[Decimal, ...] = (Decimal("2.50"), Decimal("5.00"))
    """The stakes allowed for ``prize games 3`` and ``prize match 5``."""
    rate_limits: tuple[tuple[Decimal, Decimal], ...] = ((Decimal("1.00"), Decimal("10.00")),
                                                        (Decimal("2.00"), Decimal("20.00")))
    """The (rate per point, limit) pairs allowed for ``prize single``."""

    @field_validator("start", mode="before")
    @classmethod
    def _start(cls, value: object) -> Decimal:
        return _amount(value)

    @field_validator("fee_percent", mode="before")
    @classmethod
    def _fee(cls, value: object) -> Decimal:
        percent = _amount(value)
        if percent > 100:
            raise ValueError(f"must be a percentage from 0 to 100, got {value!r}")
        return percent

    @field_validator("stakes", mode="before")
    @classmethod
    def _stakes(cls, value: object) -> tuple[Decimal, ...]:
        return _positive_amounts(value)

    @field_validator("rate_limits", mode="before")
    @classmethod
    def _rate_limits(cls, value: object) -> tuple[tuple[Decimal, Decimal], ...]:
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError(f"must be a list of [rate, limit] pairs like [[1, 10], [2, 20]], got {value!r}")
        pairs = []
        for pair in value:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"must be a list of [rate, limit] pairs like [[1, 10], [2, 20]], got {value!r}")
            rate, limit = _positive_amounts(pair)
            if limit < rate:
                raise ValueError(f"a limit below its rate makes no sense: {list(pair)!r}")
            pairs.append((rate, limit))
        return tuple(pairs)


class Config(BaseModel):
    """The whole configuration; ``source`` is the file it came from (or the embedded default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: ServiceConfig = Field(default_factory=ServiceConfig)
    database: DatabaseConfig
    imap: ImapConfig | None = None
    smtp: SmtpConfig | None = None
    game: GameConfig = Field(default_factory=GameConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    assistant: AssistantConfig = Field(default_factory=AssistantConfig)
    web: WebConfig | None = Field(default_factory=WebConfig)
    """None: no web board (``[web] enabled = false``)."""
    credits: CreditsConfig = Field(default_factory=CreditsConfig)
    source: str = EMBEDDED_DEFAULT

    @field_validator("web")
    @classmethod
    def _web_off(cls, value: WebConfig | None) -> WebConfig | None:
        return value if value is not None and value.enabled else None

    @property
    def data_dir(self) -> Path:
        return self.service.data_dir

    @property
    def inbox_dir(self) -> Path:
        """The local Maildir read when no `[imap]` table is configured."""
        return self.service.data_dir / "inbox"

    @property
    def applying_dir(self) -> Path:
        """Where ``pbem serve`` writes down the mails it is applying (:mod:`pbem.store.attempts`)."""
        return self.service.data_dir / "applying"

    @property
    def outbox_dir(self) -> Path:
        """The local Maildir written when no `[smtp]` table is configured."""
        return self.service.data_dir / "outbox"

    @property
    def dkim_domain(self) -> str | None:
        """The domain outgoing mail is DKIM-signed for, or None when it is not signed."""
        if self.smtp is None or self.smtp.dkim_selector is None:
            return None
        return self.smtp.dkim_domain or self.service.address.rpartition("@")[2]

    @property
    def poll_interval(self) -> float:
        """Seconds between safety-net reads of the inbox."""
        return self.imap.poll_interval if self.imap else DEFAULT_POLL_INTERVAL


_TABLES: dict[str, type[_Table]] = {
    "service": ServiceConfig, "database": DatabaseConfig, "imap": ImapConfig, "smtp": SmtpConfig,
    "game": GameConfig, "limits": LimitsConfig, "assistant": AssistantConfig, "web": WebConfig,
    "credits": CreditsConfig,
}
KEYS = {name: tuple(key for key in model.model_fields if key != "password") + (
    _PASSWORD_KEYS if name in ("imap", "smtp") else ()) for name, model in _TABLES.items()}
"""Every key of every table, as the config file spells them."""


def load_config(path: Path | None, mail_secrets: bool = True) -> Config:
    """Read and validate the config file, or return the embedded default when `path` is None.

    ``mail_secrets=False`` leaves the passwords of `password_env` and `password_file` unread (empty),
    for commands that only use the database: an operator's shell need not hold them.
    """
    if path is None:
        return _build({}, EMBEDDED_DEFAULT, mail_secrets)
    try:
        document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return _build(document, str(path), mail_secrets)


def _build(document: dict[str, Any], source: str, mail_secrets: bool = True) -> Config:
    for name, value in document.items():
        if name not in _TABLES:
            raise ConfigError(f"{source}: [{name}]: unknown table (known: {', '.join(_TABLES)})")
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: {name}: must be a table [{name}]")
    try:
        service = ServiceConfig.model_validate(document.get("service", {}))
        database = {"url": f"sqlite:///{service.data_dir / 'pbem.db'}", **document.get("database", {})}
        return Config.model_validate({**document, "database": database, "source": source},
                                     context={"without_mail_secrets": not mail_secrets})
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source)) from None


_TYPE_NAMES = {"int_type": "an integer", "string_type": "a string", "bool_type": "true or false",
               "float_type": "a number", "int_from_float": "an integer"}


def _describe(error: ValidationError, source: str) -> str:
    """The first problem as ``FILE: [table] key: problem`` (the table for ServiceConfig alone)."""
    first = error.errors()[0]
    location = [str(part) for part in first["loc"]]
    if error.title == "ServiceConfig":
        location.insert(0, "service")
    table = location[0]
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, KeyProblem):
        return f"{source}: [{table}] {cause.key}: {cause.problem}"
    key = location[1] if len(location) > 1 else ""
    kind = first["type"]
    if kind == "extra_forbidden":
        problem = f"unknown key (known: {', '.join(KEYS[table])})"
    elif kind == "missing":
        problem = "missing (required)"
    elif kind in _TYPE_NAMES:
        problem = f"must be {_TYPE_NAMES[kind]}, got {first['input']!r}"
    elif isinstance(cause, ValueError):
        problem = str(cause)
    else:
        problem = first["msg"]
    return f"{source}: [{table}] {key}: {problem}"
