"""The operator's configuration (SPEC §5): a TOML file read into frozen dataclasses.

Every key is validated when the file is loaded, so that a typo stops the daemon at start with a
message naming the file and the key, instead of surfacing hours later in a mail job.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, TypeVar

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from pbem.addresses import is_plain_address

EMBEDDED_DEFAULT = "<embedded default>"
DEFAULT_POLL_INTERVAL = 60.0
LANGUAGES = ("de", "en")
SECURITY_MODES = ("ssl", "starttls", "none")
IMAP_PORTS = {"ssl": 993, "starttls": 143, "none": 143}
SMTP_PORTS = {"ssl": 465, "starttls": 587, "none": 25}

_DURATION = re.compile(r"^\s*(\d+)\s*([dhm])\s*$")
_DURATION_UNITS = {"d": "days", "h": "hours", "m": "minutes"}

T = TypeVar("T")


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and the key."""


class Secret:
    """A password that never shows in a repr, a log line or a traceback's locals."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True)
class ServiceConfig:
    address: str = "backgammon@localhost"
    name: str = "Backgammon by Mail"
    language: str = "en"
    data_dir: Path = field(default_factory=lambda: Path("pbem-data").absolute())


@dataclass(frozen=True)
class DatabaseConfig:
    url: str


@dataclass(frozen=True)
class ImapConfig:
    host: str
    port: int
    security: str
    username: str
    password: Secret
    mailbox: str = "INBOX"
    poll_interval: float = DEFAULT_POLL_INTERVAL
    idle: bool = True


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    security: str
    username: str | None = None
    password: Secret | None = None


@dataclass(frozen=True)
class GameConfig:
    cube_cap: int = 64
    move_clock: timedelta = timedelta(days=3)
    time_bank: timedelta = timedelta(days=14)
    vacation_days_per_year: int = 30


@dataclass(frozen=True)
class LimitsConfig:
    max_mail_bytes: int = 2_000_000
    invitations_per_day: int = 10
    """Invitations one player may send in 24 hours."""
    invitations_received_per_day: int = 3
    """Invitations one address may receive in 24 hours, from all senders together."""
    give_up_after: timedelta = timedelta(days=3)
    """An answer the mail server still refuses after this long is given up (and logged)."""


@dataclass(frozen=True)
class AssistantConfig:
    plies: int = 2
    """bgsage's search depth for the Assistant and the review: 2 plays at about 2 mEMG as GNU
    Backgammon judges it and answers within about 0.1 s (p95); 1 answers in milliseconds at
    about 4 mEMG (``bench/assistant_bench.py``, the README's table)."""


@dataclass(frozen=True)
class Config:
    service: ServiceConfig
    database: DatabaseConfig
    imap: ImapConfig | None = None
    smtp: SmtpConfig | None = None
    game: GameConfig = GameConfig()
    limits: LimitsConfig = LimitsConfig()
    assistant: AssistantConfig = AssistantConfig()
    source: str = EMBEDDED_DEFAULT

    @property
    def data_dir(self) -> Path:
        return self.service.data_dir

    @property
    def inbox_dir(self) -> Path:
        """The local Maildir read when no `[imap]` table is configured."""
        return self.service.data_dir / "inbox"

    @property
    def outbox_dir(self) -> Path:
        """The local Maildir written when no `[smtp]` table is configured."""
        return self.service.data_dir / "outbox"

    @property
    def poll_interval(self) -> float:
        """Seconds between safety-net reads of the inbox."""
        return self.imap.poll_interval if self.imap else DEFAULT_POLL_INTERVAL


def parse_duration(text: str) -> timedelta:
    """Read a duration such as `3d`, `12h` or `90m` (the spelling players use in `clock 3d/14d`)."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"not a duration like 3d, 12h or 90m: {text!r}")
    return timedelta(**{_DURATION_UNITS[match.group(2)]: int(match.group(1))})


def is_mail_address(text: str) -> bool:
    """True for a bare address `local@domain` (no display name, no angle brackets)."""
    return is_plain_address(text)


def load_config(path: Path | None) -> Config:
    """Read and validate the config file, or return the embedded default when `path` is None."""
    if path is None:
        return _build({}, EMBEDDED_DEFAULT)
    try:
        document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return _build(document, str(path))


class _Table:
    """One TOML table being read, its keys checked against the known ones first."""

    def __init__(self, values: dict[str, Any], name: str, source: str) -> None:
        self.values = values
        self.name = name
        self.source = source
        unknown = sorted(set(values) - set(_KEYS[name]))
        if unknown:
            raise self.error(unknown[0], f"unknown key (known: {', '.join(_KEYS[name])})")

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.source}: [{self.name}] {key}: {problem}")

    def has(self, key: str) -> bool:
        return key in self.values

    def get(self, key: str, kind: type[T], default: T | None = None, *, required: bool = False) -> T:
        if key not in self.values:
            if required:
                raise self.error(key, "missing (required)")
            return default  # type: ignore[return-value]
        value = self.values[key]
        accepted = (int, float) if kind is float else kind
        if not isinstance(value, accepted) or (kind is not bool and isinstance(value, bool)):
            raise self.error(key, f"must be {_KIND_NAMES[kind]}, got {value!r}")
        return kind(value)  # type: ignore[call-arg]

    def check(self, key: str, value: T, valid: Callable[[T], bool], expected: str) -> T:
        if not valid(value):
            raise self.error(key, f"must be {expected}, got {value!r}")
        return value


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
_MAIL_SERVER_KEYS = ("host", "port", "security", "username", "password", "password_env", "password_file")
_KEYS = {
    "service": ("address", "name", "language", "data_dir"),
    "database": ("url",),
    "imap": _MAIL_SERVER_KEYS + ("mailbox", "poll_interval", "idle"),
    "smtp": _MAIL_SERVER_KEYS,
    "game": ("cube_cap", "move_clock", "time_bank", "vacation_days_per_year"),
    "limits": ("max_mail_bytes", "invitations_per_day", "invitations_received_per_day", "give_up_after"),
    "assistant": ("plies",),
}
_TABLES = tuple(_KEYS)


def _build(document: dict[str, Any], source: str) -> Config:
    for name, value in document.items():
        if name not in _TABLES:
            raise ConfigError(f"{source}: [{name}]: unknown table (known: {', '.join(_TABLES)})")
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: {name}: must be a table [{name}]")
    tables = {name: _Table(document.get(name, {}), name, source) for name in _TABLES}
    service = _service(tables["service"])
    return Config(
        service=service,
        database=_database(tables["database"], service.data_dir),
        imap=_imap(tables["imap"]) if "imap" in document else None,
        smtp=_smtp(tables["smtp"]) if "smtp" in document else None,
        game=_game(tables["game"]),
        limits=_limits(tables["limits"]),
        assistant=_assistant(tables["assistant"]),
        source=source,
    )


def _service(table: _Table) -> ServiceConfig:
    defaults = ServiceConfig()
    address = table.check("address", table.get("address", str, defaults.address), is_mail_address,
                          "a mail address like backgammon@example.org")
    language = table.check("language", table.get("language", str, defaults.language),
                           lambda value: value in LANGUAGES, " or ".join(LANGUAGES))
    name = table.check("name", table.get("name", str, defaults.name),
                       lambda value: value.strip() != "" and not _has_line_break(value),
                       "a non-empty name on one line")
    data_dir = table.check("data_dir", table.get("data_dir", str, "pbem-data"),
                           lambda value: value.strip() != "", "a directory path")
    return ServiceConfig(address=address, name=name, language=language,
                         data_dir=Path(data_dir).expanduser().absolute())


def _database(table: _Table, data_dir: Path) -> DatabaseConfig:
    url = table.get("url", str, f"sqlite:///{data_dir / 'pbem.db'}")
    try:
        make_url(url)
    except ArgumentError as exc:
        raise table.error("url", f"not an SQLAlchemy database URL: {url!r}") from exc
    return DatabaseConfig(url=url)


def _imap(table: _Table) -> ImapConfig:
    security = _security(table, "ssl")
    password = _password(table)
    if password is None:
        raise table.error("password", "missing: give password, password_env or password_file")
    return ImapConfig(
        host=_host(table),
        port=_port(table, IMAP_PORTS[security]),
        security=security,
        username=table.check("username", table.get("username", str, required=True),
                             lambda value: value != "", "a non-empty user name"),
        password=password,
        mailbox=table.check("mailbox", table.get("mailbox", str, "INBOX"),
                            lambda value: value != "" and not _has_line_break(value), "a mailbox name"),
        poll_interval=table.check("poll_interval", table.get("poll_interval", float, DEFAULT_POLL_INTERVAL),
                                  lambda value: 1 <= value <= 86400, "a number of seconds from 1 to 86400"),
        idle=table.get("idle", bool, True),
    )


def _smtp(table: _Table) -> SmtpConfig:
    security = _security(table, "starttls")
    username = table.get("username", str)
    password = _password(table)
    if username is not None and password is None:
        raise table.error("password", "missing: give password, password_env or password_file")
    if password is not None and username is None:
        raise table.error("username", "missing: a password is given, so a user name is needed")
    return SmtpConfig(host=_host(table), port=_port(table, SMTP_PORTS[security]), security=security,
                      username=username, password=password)


def _game(table: _Table) -> GameConfig:
    defaults = GameConfig()
    cube_cap = table.check("cube_cap", table.get("cube_cap", int, defaults.cube_cap),
                           lambda value: value >= 2 and value & (value - 1) == 0,
                           "a power of two from 2 upwards")
    return GameConfig(
        cube_cap=cube_cap,
        move_clock=_duration(table, "move_clock", defaults.move_clock),
        time_bank=_duration(table, "time_bank", defaults.time_bank),
        vacation_days_per_year=table.check(
            "vacation_days_per_year", table.get("vacation_days_per_year", int, defaults.vacation_days_per_year),
            lambda value: 0 <= value <= 366, "a number of days from 0 to 366"),
    )


def _limits(table: _Table) -> LimitsConfig:
    defaults = LimitsConfig()
    return LimitsConfig(
        max_mail_bytes=table.check("max_mail_bytes", table.get("max_mail_bytes", int, defaults.max_mail_bytes),
                                   lambda value: value >= 1024, "a number of bytes of at least 1024"),
        invitations_per_day=table.check(
            "invitations_per_day", table.get("invitations_per_day", int, defaults.invitations_per_day),
            lambda value: value >= 0, "a number of invitations, 0 or more"),
        invitations_received_per_day=table.check(
            "invitations_received_per_day",
            table.get("invitations_received_per_day", int, defaults.invitations_received_per_day),
            lambda value: value >= 0, "a number of invitations, 0 or more"),
        give_up_after=_duration(table, "give_up_after", defaults.give_up_after),
    )


def _assistant(table: _Table) -> AssistantConfig:
    plies = table.check("plies", table.get("plies", int, AssistantConfig.plies),
                        lambda value: 1 <= value <= 4, "a number of plies from 1 to 4")
    return AssistantConfig(plies=plies)


def _duration(table: _Table, key: str, default: timedelta) -> timedelta:
    if not table.has(key):
        return default
    text = table.get(key, str)
    try:
        duration = parse_duration(text)
    except ValueError:
        raise table.error(key, f"must be a duration like 3d, 12h or 90m, got {text!r}") from None
    return table.check(key, duration, lambda value: value > timedelta(0), "longer than zero")


def _security(table: _Table, default: str) -> str:
    return table.check("security", table.get("security", str, default),
                       lambda value: value in SECURITY_MODES, " | ".join(SECURITY_MODES))


def _host(table: _Table) -> str:
    return table.check("host", table.get("host", str, required=True),
                       lambda value: re.fullmatch(r"[A-Za-z0-9.:\[\]-]+", value) is not None,
                       "a host name or IP address")


def _port(table: _Table, default: int) -> int:
    return table.check("port", table.get("port", int, default), lambda value: 1 <= value <= 65535,
                       "a port number from 1 to 65535")


def _password(table: _Table) -> Secret | None:
    """Exactly one of `password`, `password_env`, `password_file`; None when none is given."""
    given = [key for key in ("password", "password_env", "password_file") if table.has(key)]
    if len(given) > 1:
        raise table.error(given[1], f"give only one of password, password_env, password_file (also {given[0]})")
    if not given:
        return None
    key = given[0]
    value = table.get(key, str)
    if key == "password":
        return Secret(value)
    if key == "password_env":
        if value not in os.environ:
            raise table.error(key, f"the environment variable {value} is not set")
        return Secret(os.environ[value])
    try:
        return Secret(Path(value).expanduser().read_text(encoding="utf-8").rstrip("\r\n"))
    except OSError as exc:
        raise table.error(key, f"cannot read {value}: {exc.strerror}") from None


def _has_line_break(text: str) -> bool:
    return "\n" in text or "\r" in text
