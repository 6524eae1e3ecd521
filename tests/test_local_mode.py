"""Local mode (issue 24): without sign-in the app serves this machine only, and says who may spend.

* A real ``streamlit run app.py`` started from the project folder, with no address flag, answers on
  the loopback interface and refuses connections on the machine's other interfaces.
* Served on another address without ``[auth]``, every page shows the refusal and draws nothing.
* The sidebar says that anyone with access to this machine is the owner, and a draw records who.
"""
from __future__ import annotations

import os
import socket
import urllib.request
from pathlib import Path

import pytest
from browser_util import free_port, streamlit_server
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from dpcore.store import ReleaseStore

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "pages"


def _other_interface() -> str | None:
    """An IPv4 address of this machine that is not loopback (the one it would route out by), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))   # no packet is sent: this only picks the outgoing interface
            addr = s.getsockname()[0]
        except OSError:
            return None
    return None if addr.startswith("127.") else addr


def test_the_app_serves_loopback_only_without_sign_in(tmp_path):
    other = _other_interface()
    if other is None:
        pytest.skip("this machine has no network interface besides loopback")
    port = free_port()
    env = dict(os.environ, DPCORE_STORE=f"sqlite:///{tmp_path / 'releases.db'}")
    with streamlit_server("app.py", env=env, log_path=tmp_path / "server.log", port=port, address=None) as url:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as resp:
            assert resp.read().strip() == b"ok"
        with socket.socket() as s:
            s.settimeout(5)
            with pytest.raises(ConnectionRefusedError):
                s.connect((other, port))


@pytest.fixture
def served_on_every_interface():
    st_config.set_option("server.address", "0.0.0.0")
    yield
    st_config.set_option("server.address", "localhost")


@pytest.mark.parametrize("page", ["1_Explorer.py", "8_Release.py", "6_Compare.py"])
def test_another_address_without_sign_in_is_refused_with_a_sentence(page, served_on_every_interface):
    at = AppTest.from_file(str(PAGES / page), default_timeout=120).run()
    assert not at.exception
    assert at.error and "without sign-in" in at.error[0].value and "[auth]" in at.error[0].value
    assert not at.get("deck_gl_json_chart") and not at.get("plotly_chart") and not at.button
    assert ReleaseStore().releases() == []


def test_local_mode_says_who_may_spend_and_records_who_drew():
    at = AppTest.from_file(str(PAGES / "1_Explorer.py"), default_timeout=120).run()
    assert not at.exception
    assert any("Anyone with access to this machine is the data owner" in c.value for c in at.sidebar.caption)
    assert ReleaseStore().releases() == []   # opening shows a preview and records nothing (issue 56)
    at = at.button(key="draw_Explorer").click().run()
    assert not at.exception
    (rec,) = ReleaseStore().releases()       # the draw is recorded with who drew it
    assert rec.who.endswith("(local mode) · Explorer") and "@" in rec.who
