"""The config file of SPEC §5: defaults, the contract keys, and a clear error for every wrong key."""

from datetime import timedelta
from pathlib import Path

import pytest

from pydantic import SecretStr

from pbem.config import EMBEDDED_DEFAULT, ConfigError, load_config, parse_duration

FULL = """
[service]
address = "backgammon@example.org"
name = "Backgammon by Mail"
language = "de"
data_dir = "./pbem-data"

[database]
url = "sqlite:///pbem-data/pbem.db"

[imap]
host = "imap.example.org"
port = 993
security = "ssl"
username = "backgammon@example.org"
password = "hunter2"
mailbox = "INBOX"
poll_interval = 60
idle = true

[smtp]
host = "smtp.example.org"
port = 587
security = "starttls"
username = "backgammon@example.org"
password_env = "PBEM_TEST_SMTP_PASSWORD"

[game]
cube_cap = 32
move_clock = "2d"
time_bank = "10d"
vacation_days_per_year = 20

[limits]
max_mail_bytes = 500000
invitations_per_day = 5
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pbem.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_embedded_default_uses_local_maildirs_under_data_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    assert config.source == EMBEDDED_DEFAULT
    assert config.data_dir == tmp_path / "pbem-data"
    assert config.inbox_dir == tmp_path / "pbem-data" / "inbox"
    assert config.outbox_dir == tmp_path / "pbem-data" / "outbox"
    assert config.database.url == f"sqlite:///{tmp_path}/pbem-data/pbem.db"
    assert config.imap is None and config.smtp is None
    assert config.service.address == "backgammon@localhost"
    assert config.game.cube_cap == 64
    assert config.game.move_clock == timedelta(days=3)
    assert config.game.time_bank == timedelta(days=14)
    assert config.game.vacation_days_per_year == 30


def test_full_contract_file_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_TEST_SMTP_PASSWORD", "s3cret")
    config = load_config(write(tmp_path, FULL))
    assert config.service.language == "de"
    assert config.imap is not None and config.imap.port == 993 and config.imap.idle is True
    assert config.imap.password.get_secret_value() == "hunter2"
    assert config.imap.poll_interval == 60.0
    assert config.smtp is not None and config.smtp.password == SecretStr("s3cret")
    assert config.game.cube_cap == 32 and config.game.time_bank == timedelta(days=10)
    assert config.limits.max_mail_bytes == 500000
    assert config.poll_interval == 60.0


def test_passwords_never_show_in_repr(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_TEST_SMTP_PASSWORD", "s3cret")
    text = repr(load_config(write(tmp_path, FULL)))
    assert "hunter2" not in text and "s3cret" not in text


def test_password_from_file(tmp_path):
    (tmp_path / "secret").write_text("from-file\n")
    config = load_config(write(tmp_path, f"""
[smtp]
host = "localhost"
username = "u"
password_file = "{tmp_path / 'secret'}"
"""))
    assert config.smtp.password.get_secret_value() == "from-file"
    assert config.smtp.port == 587


def test_dkim_and_the_trusted_authserv_id_are_read(tmp_path):
    config = load_config(write(tmp_path, '[service]\naddress = "bg@example.org"\n'
                               '[imap]\nhost = "h"\nusername = "u"\npassword = "p"\n'
                               'trusted_authserv_id = "mx.example.org"\n'
                               '[smtp]\nhost = "h"\ndkim_selector = "pbem2026"\ndkim_key_file = "dkim.pem"\n'))
    assert config.imap is not None and config.imap.trusted_authserv_id == "mx.example.org"
    assert config.smtp is not None and config.smtp.dkim_key_file == Path("dkim.pem").absolute()
    assert config.dkim_domain == "example.org"  # the service address's, when dkim_domain is left out
    plain = load_config(write(tmp_path, '[smtp]\nhost = "h"\n'))
    assert plain.dkim_domain is None and plain.smtp is not None and plain.smtp.dkim_selector is None


def test_leaving_out_imap_and_smtp_keeps_the_local_folders(tmp_path):
    config = load_config(write(tmp_path, '[service]\naddress = "bg@example.org"\n'))
    assert config.imap is None and config.smtp is None
    assert config.service.address == "bg@example.org"


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("[servce]\n", "[servce]", "unknown table"),
        ("[service]\nadress = 'a@b.org'\n", "[service] adress", "unknown key"),
        ("[service]\naddress = 'not an address'\n", "[service] address", "mail address"),
        ("[service]\naddress = 7\n", "[service] address", "must be a string"),
        ("[service]\nlanguage = 'fr'\n", "[service] language", "de or en"),
        ("[service]\nname = ''\n", "[service] name", "non-empty"),
        ("[database]\nurl = 'no url'\n", "[database] url", "SQLAlchemy"),
        ("[imap]\nport = 993\nusername = 'u'\npassword = 'p'\n", "[imap] host", "missing"),
        ("[imap]\nhost = 'h'\nusername = 'u'\n", "[imap] password", "missing"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\nport = 70000\n", "[imap] port", "1 to 65535"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\nport = '993'\n", "[imap] port", "an integer"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\nsecurity = 'tls'\n", "[imap] security",
         "ssl | starttls | none"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\nidle = 'yes'\n", "[imap] idle", "true or false"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\npoll_interval = 0\n", "[imap] poll_interval",
         "seconds"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\npassword_env = 'X'\n", "[imap] password_env",
         "only one"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword_env = 'PBEM_SURELY_UNSET_VARIABLE'\n",
         "[imap] password_env", "not set"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword_file = '/nonexistent/pw'\n", "[imap] password_file",
         "cannot read"),
        ("[smtp]\nhost = 'h'\nusername = 'u'\n", "[smtp] password", "missing"),
        ("[smtp]\nhost = 'h'\npassword = 'p'\n", "[smtp] username", "missing"),
        ("[smtp]\nhost = 'bad host!'\n", "[smtp] host", "host name"),
        ("[smtp]\nhost = 'h'\ndkim_selector = 's1'\n", "[smtp] dkim_key_file", "missing: dkim_selector is given"),
        ("[smtp]\nhost = 'h'\ndkim_key_file = '/etc/pbem/dkim.pem'\n", "[smtp] dkim_selector",
         "missing: dkim_key_file is given"),
        ("[smtp]\nhost = 'h'\ndkim_domain = 'example.org'\n", "[smtp] dkim_domain", "only for DKIM signing"),
        ("[smtp]\nhost = 'h'\ndkim_selector = 's 1'\ndkim_key_file = 'k.pem'\n", "[smtp] dkim_selector",
         "DKIM selector"),
        ("[smtp]\nhost = 'h'\ndkim_selector = 's1'\ndkim_key_file = 'k.pem'\ndkim_domain = 'a@b.org'\n",
         "[smtp] dkim_domain", "domain like example.org"),
        ("[smtp]\nhost = 'h'\ndkim_selector = 's1'\ndkim_key_file = ''\n", "[smtp] dkim_key_file",
         "PEM private key"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\ntrusted_authserv_id = 'mx; dmarc=pass'\n",
         "[imap] trusted_authserv_id", "authserv-id"),
        ("[imap]\nhost = 'h'\nusername = 'u'\npassword = 'p'\ntrusted_authserv_id = ''\n",
         "[imap] trusted_authserv_id", "authserv-id"),
        ("[game]\ncube_cap = 48\n", "[game] cube_cap", "power of two"),
        ("[game]\nmove_clock = '3 days'\n", "[game] move_clock", "duration"),
        ("[game]\ntime_bank = '0d'\n", "[game] time_bank", "longer than zero"),
        ("[game]\nvacation_days_per_year = -1\n", "[game] vacation_days_per_year", "0 to 366"),
        ("[limits]\nmax_mail_bytes = true\n", "[limits] max_mail_bytes", "an integer"),
        ("[limits]\ninvitations_per_day = -3\n", "[limits] invitations_per_day", "0 or more"),
        ("service = 3\n", "service", "must be a table"),
        ("[credits]\nstart = 1e30\n", "[credits] start", "not an amount of credits"),
        ("[credits]\nstart = 1000000.01\n", "[credits] start", "largest amount of credits, 1000000.00"),
        ("[credits]\nstart = -1\n", "[credits] start", "must be 0 or more"),
        ("[credits]\nstart = '1_000'\n", "[credits] start", "not an amount of credits"),
        ("[credits]\nstakes = [2.5, 1e99]\n", "[credits] stakes", "not an amount of credits"),
    ],
)
def test_every_wrong_key_names_file_and_key(tmp_path, text, key, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {key}"), message
    assert words in message, message


def test_unreadable_and_invalid_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[service\n"))


def test_parse_duration():
    assert parse_duration("3d") == timedelta(days=3)
    assert parse_duration("12h") == timedelta(hours=12)
    assert parse_duration("90m") == timedelta(minutes=90)
    with pytest.raises(ValueError):
        parse_duration("3w")


def test_commands_that_use_only_the_database_need_no_mail_passwords(tmp_path, monkeypatch):
    monkeypatch.delenv("PBEM_SURELY_UNSET_VARIABLE", raising=False)
    path = write(tmp_path, "[imap]\nhost = 'h'\nusername = 'u'\npassword_env = 'PBEM_SURELY_UNSET_VARIABLE'\n")
    with pytest.raises(ConfigError, match="not set"):
        load_config(path)
    config = load_config(path, mail_secrets=False)
    assert config.imap is not None and config.imap.password.get_secret_value() == ""


def test_the_embedded_default_serves_the_web_board_on_localhost(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PBEM_WEB_PORT", raising=False)
    web = load_config(None).web
    assert web is not None and (web.bind, web.port, web.public_url) == ("127.0.0.1", 8080, "http://127.0.0.1:8080")
    monkeypatch.setenv("PBEM_WEB_PORT", "8081")
    assert load_config(None).web.port == 8081, "several daemons on one host, without a file"
    assert load_config(write(tmp_path, "[web]\nport = 9000\n")).web.port == 9000, "the file wins"
    assert load_config(write(tmp_path, "[web]\nenabled = false\n")).web is None
    monkeypatch.setenv("PBEM_WEB_PORT", "eighty")
    with pytest.raises(ConfigError, match="PBEM_WEB_PORT must be a port number"):
        load_config(None)


@pytest.mark.parametrize(("table", "problem"), [
    ('trusted_proxies = ["proxy.example.org"]', "[web] trusted_proxies: 'proxy.example.org' is not an IP address"),
    ('trusted_proxies = ["10.0.0.0/33"]', "[web] trusted_proxies: '10.0.0.0/33' is not an IP address or network"),
    ('bind = "0.0.0.0"', "[web] base_url: is needed with bind = '0.0.0.0': the mails would link to http://0.0.0.0:8080"),
    ('bind = "::"', "[web] base_url: is needed with bind = '::'"),
])
def test_web_settings_are_checked(tmp_path, table, problem):
    with pytest.raises(ConfigError) as raised:
        load_config(write(tmp_path, f"[web]\nport = 8080\n{table}\n"))
    assert problem in str(raised.value), str(raised.value)


def test_web_proxies_may_be_networks_and_every_address_needs_a_base_url(tmp_path):
    web = load_config(write(tmp_path, '[web]\nbind = "0.0.0.0"\nbase_url = "https://bg.example.org"\n'
                                      'trusted_proxies = ["10.0.0.0/8", "::1"]\n')).web
    assert web.trusts("10.1.2.3") and web.trusts("::1") and not web.trusts("11.0.0.1") and not web.trusts("x")


def test_pbem_check_reports_the_web_board(tmp_path, capsys):
    import socket

    from pbem.cli import main

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        path = write(tmp_path, f'[service]\ndata_dir = "{tmp_path}"\n[web]\nport = {port}\n'
                               'trusted_proxies = ["10.0.0.0/8"]\n')
        assert main(["check", "--config", str(path)]) == 0
        line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith(f"Web board: listens on 127.0.0.1 port {port}; mails link to http://127.0.0.1:{port}/g/…")
    assert "set base_url" in line and "trusted proxies: 10.0.0.0/8" in line and f"port {port} is in use" in line
    off = write(tmp_path, f'[service]\ndata_dir = "{tmp_path}"\n[web]\nenabled = false\n')
    assert main(["check", "--config", str(off)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("Web board: off")
