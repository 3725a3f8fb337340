"""Any value typed into a page's URL gets a page, never a server error (live service)."""

from __future__ import annotations

import pytest

from dashboard import ids
from dashboard.client import ApiClient
from dashboard.context import Context
from dashboard.pages import board, incidents, metrics, models
from dashboard.settings import DashboardSettings

pytestmark = pytest.mark.integration

TYPED = [
    "",
    "None",
    "unknown",
    'a"b',
    "a\\b",
    ".*",
    "(",
    "[x",
    "{}",
    "\u00e9\u4e2d",
    "a|b",
    "1e309",
    "-1",
    "nan",
    "inf",
    "9" * 40,
    "%00",
    "..",
    "../incidents",
    "\x00",
    " ",
    "x" * 3000,
    'latency_avg{service="PetSite"}',
    'bad|latency_avg{service=~"("}',
    ["PetSite", "frontend"],
]
BOARD_KEYS = ("model", "service", "instance", "host", "gpu", "from", "to", "range", "panel")


def _components(tree, found=None) -> dict:
    found = {} if found is None else found
    if getattr(tree, "id", None):
        found[tree.id] = tree
    children = getattr(tree, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            _components(child, found)
    return found


@pytest.fixture(scope="module")
def context(bundle_site):
    base, _bundles = bundle_site
    settings = DashboardSettings(api_url=base)
    client = ApiClient(base, timeout=30)
    yield Context(client, settings)
    client.close()


@pytest.mark.parametrize("key", BOARD_KEYS)
def test_board_takes_any_value_of_each_url_key(context, bundle_site, key):
    _base, bundles = bundle_site
    start = round(bundles["petshop"]["breach_start"])
    for value in TYPED:
        query = {"from": str(start - 1800), "to": str(start + 900), key: value}
        page = _components(board.layout(context, **query))
        state = page[ids.BOARD_WINDOW].data
        choice = {
            "model": page[ids.BOARD_MODEL].value,
            "services": page[ids.BOARD_SERVICE].value or [],
            "instances": page[ids.BOARD_INSTANCE].value or [],
            "hosts": page[ids.BOARD_HOST].value or [],
            "gpus": page[ids.BOARD_GPU].value or [],
            "refresh": [],
            "panels": page[ids.BOARD_PANELS].value or [],
        }
        _fig, url, status, notes, _style = board.render_board(context, state, choice)
        assert url.startswith("?") and status, (key, value)
        if key == "model" and value == "unknown":
            assert "no data for model=unknown in this window" in str(notes)


def test_other_pages_take_any_value(context):
    for value in TYPED:
        incidents.detail_layout(context, incident_id=value if isinstance(value, str) else "1")
        models.layout(context, model=value)
        metrics.layout(context, q=value)
        incidents.list_layout(context, x=value)


def _text(tree) -> str:
    if isinstance(tree, str | int | float):
        return str(tree)
    children = getattr(tree, "children", None)
    parts = children if isinstance(children, list) else [children]
    return " ".join(_text(c) for c in parts if c is not None)


def test_a_url_value_the_page_cannot_use_is_said_not_ignored(context):
    from dashboard.pages import slas

    page = _components(board.layout(context, **{"from": "yesterday", "to": "now"}))
    said = _text(page[ids.BOARD_QUERY_PROBLEMS])
    assert "from='yesterday' is not a time" in said and "showing the last" in said
    page = _components(board.layout(context, **{"from": "now-2h", "to": "now-3h"}))
    assert "to is not after from" in _text(page[ids.BOARD_QUERY_PROBLEMS])
    page = _components(board.layout(context, range="1y"))
    assert "range='1y' is not one of" in _text(page[ids.BOARD_QUERY_PROBLEMS])
    fine = _components(board.layout(context, **{"from": "now-2h", "to": "now"}))
    assert ids.BOARD_QUERY_PROBLEMS not in fine
    word = _text(incidents.detail_layout(context, incident_id="abc"))
    assert "No incident 'abc'" in word and "/incidents/12" in word and "Input should" not in word
    assert "No incident 999999" in _text(incidents.detail_layout(context, incident_id="999999"))
    page = _components(slas.layout(context, sla="nope"))
    assert "No SLA named 'nope'" in _text(page[ids.SLAS_UNKNOWN])
