"""deploy/prometheus and deploy/grafana, checked as far as can be without Prometheus or
Grafana: the files load, the rules and panels are complete, every metric they name is one a
real server exposes, and the compose profile mounts what the provisioning expects."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from playhall import app

from .metrics_scrape import Scrape, scrape

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "playhall.json"

#: A metric name in PromQL: ours and the process collector's (no label or function name
#: starts so), and Prometheus' own ``up`` of a target.
_NAME = re.compile(r"\b(?:playhall|process|python)_[a-z0-9_]+\b|\bup(?=\{)")


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _rules() -> list[dict[str, Any]]:
    return [rule for group in _yaml(DEPLOY / "prometheus" / "alerts.yml")["groups"]
            for rule in group["rules"]]


def _panels() -> list[dict[str, Any]]:
    return [p for p in json.loads(DASHBOARD.read_text())["panels"] if p["type"] != "row"]


def _exprs() -> list[str]:
    found = [rule["expr"] for rule in _rules()]
    found += [t["expr"] for panel in _panels() for t in panel["targets"]]
    return found


def _exposed(scraped: Scrape) -> set[str]:
    """Every sample name the scrape's families have or would have (a labelled counter shows
    its family before its first sample)."""
    names = {"up"}  # Prometheus' own, per target
    for family, kind in scraped.types.items():
        names |= {
            "counter": {f"{family}_total"},
            "histogram": {f"{family}_bucket", f"{family}_count", f"{family}_sum"},
            "info": {f"{family}_info"},
        }.get(kind, {family})
    return names


async def test_every_metric_the_dashboard_and_the_rules_name_is_exposed(
    server: app.Running,
) -> None:
    port = server.metrics_port
    assert port is not None
    exposed = _exposed(await scrape(port))
    used = {name for expr in _exprs() for name in _NAME.findall(expr)}
    assert {"playhall_commit_seconds_bucket", "playhall_requests_total", "up"} <= used
    assert used - exposed == set()


@pytest.mark.parametrize("expr", _exprs())
def test_each_query_is_balanced_and_uses_our_job(expr: str) -> None:
    for opening, closing in ("()", "{}", "[]"):
        assert expr.count(opening) == expr.count(closing), expr
    assert expr.count('"') % 2 == 0, expr
    jobs = re.findall(r'job="([^"]*)"', expr)
    assert set(jobs) <= {"playhall"}, expr


def test_the_alert_rules_cover_what_an_operator_must_hear_of() -> None:
    rules = {rule["alert"]: rule for rule in _rules()}
    assert {"PlayhallRedisUnavailable", "PlayhallCommitSlow", "PlayhallNotReady",
            "PlayhallErrorRate", "PlayhallDown"} <= set(rules)
    for name, rule in rules.items():
        assert re.fullmatch(r"\d+[smh]", rule["for"]), name
        assert rule["labels"]["severity"] in ("critical", "warning"), name
        assert rule["annotations"]["summary"], name
    assert "histogram_quantile(0.99" in rules["PlayhallCommitSlow"]["expr"]


def test_prometheus_scrapes_the_metrics_listener_with_the_rules_loaded() -> None:
    config = _yaml(DEPLOY / "prometheus" / "prometheus.yml")
    assert config["rule_files"] == ["alerts.yml"]
    (job,) = config["scrape_configs"]
    assert job["job_name"] == "playhall"
    # Every replica of the compose service, each a target of its own.
    assert job["dns_sd_configs"] == [
        {"names": ["playhall"], "type": "A", "port": 9765, "refresh_interval": "15s"}
    ]


def test_the_dashboard_has_its_panels_and_one_data_source() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    titles = {p["title"] for p in _panels()}
    assert {"Players online", "Rooms by game and status", "Moves/s", "Commit latency p50 / p99",
            "Refusals by code", "Redis outage and silence", "CPU", "Memory"} <= titles
    rows = [p for p in dashboard["panels"] if p["type"] == "row"]
    assert any(r.get("repeat") == "instance" for r in rows)  # a row per process
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    datasource = _yaml(DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml")
    uid = datasource["datasources"][0]["uid"]
    for panel in _panels():
        assert panel["datasource"]["uid"] == uid, panel["title"]
        assert panel["targets"], panel["title"]


def test_the_monitoring_profile_mounts_what_the_provisioning_expects() -> None:
    compose = _yaml(DEPLOY / "compose.yaml")
    services = compose["services"]
    assert services["prometheus"]["profiles"] == ["monitoring"]
    assert services["grafana"]["profiles"] == ["monitoring"]
    assert "profiles" not in services["playhall"]  # the server runs without the profile
    assert services["playhall"]["environment"]["PLAYHALL_METRICS_LISTEN"] == "0.0.0.0:9765"
    for service in services.values():  # the metrics port is published to nobody
        assert all(not str(p).endswith("9765") for p in service.get("ports", []))
    assert "./prometheus:/etc/prometheus:ro" in services["prometheus"]["volumes"]
    provider = _yaml(DEPLOY / "grafana" / "provisioning" / "dashboards" / "playhall.yml")
    folder = provider["providers"][0]["options"]["path"]
    assert f"./grafana/dashboards:{folder}:ro" in services["grafana"]["volumes"]
    assert "./grafana/provisioning:/etc/grafana/provisioning:ro" in services["grafana"]["volumes"]
    for service in ("prometheus", "grafana"):  # published to this host only
        assert all(str(p).startswith("127.0.0.1:") for p in services[service]["ports"])


def test_every_alert_has_a_promtool_unit_test() -> None:
    tests = _yaml(DEPLOY / "prometheus" / "alerts_test.yml")
    assert tests["rule_files"] == ["alerts.yml"]
    firing = {
        case["alertname"]
        for test in tests["tests"]
        for case in test["alert_rule_test"]
        if case["exp_alerts"]
    }
    assert firing == {rule["alert"] for rule in _rules()}
