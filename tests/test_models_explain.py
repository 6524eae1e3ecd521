"""The Explain page's model (issue 65, point 11): bounds in the one rounding, the advisor in short bullets that agree
with "What is not private"."""
from dpcore.explain import epsilon_statements
from dpcore.formatting import fmt_share
from ui.models import explain as XM


def test_no_bound_below_one_reads_one_hundred_percent():
    rows = XM.levels_rows()
    ten = next(r for r in rows if r["ε"] == "10")
    assert ten["attacker's advantage at most"] == "99.99 %" and "100" not in ten["attacker's advantage at most"]
    assert ten["odds change at most"] == "22,026×"
    metrics = XM.top_metrics(epsilon_statements(10.0))
    assert [m.value for m in metrics][1] == "≤ 99.99 %"


def test_the_advisor_section_is_short_and_agrees_with_what_is_not_private():
    sections = XM.advisor_sections(0.05)
    assert len(sections) == 4 and all(len(b) <= 4 for _, b in sections)
    assert all(len(bullet) < 330 for _, b in sections for bullet in b)            # no dense paragraph
    text = XM.advisor_markdown(0.05)
    assert "public inputs only" in text and "true number of rows" in text and "not private" in text
    assert "sidebar's advisor uses a public size" in XM.NOT_PRIVATE_TEXT
    assert fmt_share(0.05) in text


def test_several_releases_add_up_in_the_one_rounding():
    assert XM.several_releases(0.5, 3).startswith("3 release(s) at ε = 0.5 together give ε = **1.5**")
