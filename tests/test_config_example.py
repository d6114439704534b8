"""config.example.toml, the operator's starting point, loads as it stands and shows every key."""

from pathlib import Path

from pydantic import SecretStr

from pbem.config import KEYS, load_config

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.toml"


def test_the_example_config_loads(monkeypatch):
    monkeypatch.setenv("PBEM_IMAP_PASSWORD", "imap secret")
    monkeypatch.setenv("PBEM_SMTP_PASSWORD", "smtp secret")
    config = load_config(EXAMPLE)
    assert config.service.address == "backgammon@example.org"
    assert config.imap is not None and config.imap.security == "ssl" and config.imap.idle
    assert config.imap.password == SecretStr("imap secret")
    assert config.smtp is not None and config.smtp.security == "starttls"
    assert config.smtp.password == SecretStr("smtp secret")


def test_the_example_config_names_every_key():
    text = EXAMPLE.read_text(encoding="utf-8")
    for table, keys in KEYS.items():
        assert f"[{table}]" in text
        for key in keys:
            assert f"{key} =" in text, f"[{table}] {key} is not in the example"
