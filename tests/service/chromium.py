"""Debian's headless Chromium under selenium, as the mail screenshots and the web board's tests
drive it (no browser download: the packages chromium and chromium-driver)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


@contextmanager
def headless_chromium(profile: Path, *flags: str) -> Iterator[webdriver.Chrome]:
    """A browser with its own profile directory and ``flags`` beside :data:`FLAGS`, quit at the end."""
    chromium, driver = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver")
    assert driver and Path(chromium).exists(), "needs the Debian packages chromium and chromium-driver"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*FLAGS, f"--user-data-dir={profile}", *flags):
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=Service(driver))
    try:
        yield browser
    finally:
        browser.quit()
