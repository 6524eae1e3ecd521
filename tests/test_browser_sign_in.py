"""Sign-in and roles in a real browser against a real OIDC provider (issue 24).

`oidc-provider-mock` runs on a free loopback port in this process; the app is served by `streamlit run`
with a secrets file whose ``[auth]`` points at it and whose ``[dpcore]`` names an owner and an analyst.
Chromium signs in through the provider's own authorization form, as a person would.

* The owner sets the data's total on the Release page; the change is in the history under their name.
* An analyst sees no form for the total, and the store refuses the same change from the handle the
  app gives their session (the guard is the store, not the hidden form).
* A viewer reaches no data page: every page says what their role allows and shows no data.
"""
from __future__ import annotations

import os
import re

import pytest
from browser_util import BAD, BROWSER_MARKS, chromium, free_port, settled, streamlit_server

from dpcore.exceptions import AccessDeniedError
from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS
RENDER_S = 180
OWNER, ANALYST, VIEWER = "owner@example.org", "ana@example.org", "vic@example.org"
PAGES = ("Explorer", "Private coresets", "WaveCluster", "High dimensional", "Compare", "Explain", "Release")


@pytest.fixture
def oidc():
    """The mock OpenID Connect provider's base URL (any client id and secret are accepted)."""
    mock = pytest.importorskip("oidc_provider_mock", reason="oidc-provider-mock is not installed")
    with mock.run_server_in_thread(port=free_port()) as server:
        yield f"http://localhost:{server.server_port}"


def _secrets(path, app_port: int, provider: str) -> str:
    path.write_text(f"""[auth]
redirect_uri = "http://127.0.0.1:{app_port}/oauth2callback"
cookie_secret = "dpcore-test-cookie-secret-{app_port}"
client_id = "dpcore-test"
client_secret = "dpcore-test-secret"
server_metadata_url = "{provider}/.well-known/openid-configuration"

[dpcore]
owners = ["{OWNER}"]
analysts = ["{ANALYST}"]
analysts_may_publish = false
""")
    return str(path)


def _sign_in(browser, url: str, who: str):
    """A fresh browser context (its own cookies) signed in as ``who`` through the provider's form."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    page = context.new_page()
    page.set_default_timeout(RENDER_S * 1000)
    page.goto(url)
    page.get_by_role("button", name="Sign in").click()
    page.locator('input[name="sub"]').fill(who)                   # the provider's authorization form
    page.get_by_role("button", name="Authorize").click()
    page.get_by_text(f"Signed in as {who}").first.wait_for()
    settled(page, RENDER_S)
    return context, page


def _open(page, name: str) -> None:
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=name, exact=True).click()
    settled(page, RENDER_S)


def test_owner_analyst_and_viewer_against_a_real_oidc_provider(tmp_path, oidc):
    store_url = f"sqlite:///{tmp_path / 'releases.db'}"
    port = free_port()
    env = dict(os.environ, DPCORE_STORE=store_url)
    secrets = _secrets(tmp_path / "secrets.toml", port, oidc)
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=tmp_path / "server.log", port=port,
                                                 args=("--secrets.files", secrets)) as url:
        # Not signed in: a sign-in button and nothing else.
        anon = browser.new_page()
        anon.goto(url)
        anon.get_by_role("button", name="Sign in").wait_for(timeout=RENDER_S * 1000)
        assert anon.get_by_text("Privacy budget of this draw").count() == 0
        anon.close()

        # The owner: draws on the Explorer (embedded public data: a preview first, then "Draw", issue 56),
        # sets the total on the Release page.
        ctx, page = _sign_in(browser, url, OWNER)
        page.get_by_text("Privacy budget of this draw").first.wait_for()
        page.get_by_role("button", name=re.compile(r"^Draw: spends")).first.click()
        page.get_by_text(re.compile(r"release #\d+ in the release store")).first.wait_for()
        assert "owner" in page.locator('[data-testid="stSidebar"]').inner_text()
        _open(page, "Release")
        page.get_by_text("Budget account for this data").wait_for()
        page.get_by_label("Total ε").fill("7.5")
        page.get_by_role("button", name="Set the total").click()
        settled(page, RENDER_S)
        page.get_by_text(re.compile(r"Changes of the total")).wait_for()
        assert page.locator(BAD).count() == 0, page.locator(BAD).first.inner_text()
        page.screenshot(path=str(tmp_path / "owner_release.png"), full_page=True)
        ctx.close()

        store = ReleaseStore(store_url)
        (dataset,) = store.datasets()
        (change,) = store.cap_history(dataset)
        assert change["epsilon"] == 7.5 and change["who"] == f"{OWNER} · Release page"
        drawn = store.history(dataset)
        assert drawn and all(r["who"].startswith(f"{OWNER} · ") for r in drawn)
        assert {g["identity"]: g["role"] for g in store.role_history()} == {OWNER: "owner", ANALYST: "analyst"}

        # The analyst: no form for the total; the store refuses the change from her session's handle.
        ctx, page = _sign_in(browser, url, ANALYST)
        assert "analyst" in page.locator('[data-testid="stSidebar"]').inner_text()
        _open(page, "Release")
        page.get_by_text("Budget account for this data").wait_for()
        page.get_by_text("Only the data owner can set or change this total").wait_for()
        assert page.get_by_role("button", name="Set the total").count() == 0
        assert page.get_by_role("button", name=re.compile("Publish this release")).count() == 0
        assert page.locator(BAD).count() == 0
        page.screenshot(path=str(tmp_path / "analyst_release.png"), full_page=True)
        ctx.close()
        with pytest.raises(AccessDeniedError, match="analyst"):
            store.acting_as(ANALYST).set_cap(dataset, 1000.0, who=f"{ANALYST} · Release page")
        assert store.cap(dataset)[0] == 7.5 and len(store.cap_history(dataset)) == 1

        # A viewer (signed in, listed nowhere): no data page shows data.
        ctx, page = _sign_in(browser, url, VIEWER)
        for name in PAGES:
            _open(page, name)
            page.get_by_text(f"You are signed in as {VIEWER}, a viewer").wait_for()
            main = page.locator('[data-testid="stMain"]').inner_text()
            assert "Privacy budget of this draw" not in main and "Budget account" not in main, (name, main[:400])
        ctx.close()
        assert store.verify()
