"""deploy/compose.yaml, deploy/haproxy and deploy/k8s as a fleet, checked as far as can be
without Docker or a cluster: the files parse (and HAProxy's own check passes, and kustomize
builds the manifests when kubectl is here), several replicas run behind a balancer with no
stickiness that checks /healthz, the drain has the time it needs, and the pieces name each
other consistently. (tests/server/test_balancer.py runs the HAProxy file for real.)"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .balancer import SHIPPED as HAPROXY_CFG
from .balancer import haproxy_executable

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _k8s() -> dict[tuple[str, str], dict[str, Any]]:
    """Every object of the kustomization, by (kind, name)."""
    kustomization = _docs(K8S / "kustomization.yaml")[0]
    found = {}
    for resource in kustomization["resources"]:
        for doc in _docs(K8S / resource):
            found[doc["kind"], doc["metadata"]["name"]] = doc
    return found


def _haproxy_sections() -> dict[str, list[str]]:
    """The configuration's sections ("backend playhall", ...) and their lines, comments out."""
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in HAPROXY_CFG.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line[0].isspace():
            current = line.strip()
            sections[current] = []
        else:
            sections[current].append(line.strip())
    return sections


def test_compose_runs_three_replicas_behind_haproxy_and_one_redis_with_its_aof() -> None:
    (compose,) = _docs(DEPLOY / "compose.yaml")
    services = compose["services"]
    server, balancer, redis = services["playhall"], services["balancer"], services["redis"]
    assert server["deploy"]["replicas"] == 3
    assert "ports" not in server  # reached only through the balancer
    # Each replica names itself (unset: its container's hostname); one fixed name would make
    # the three one process to the leases and the registry.
    assert "PLAYHALL_INSTANCE" not in server["environment"]
    assert server["environment"]["PLAYHALL_FORWARDED_HEADER"] == "X-Forwarded-For"
    assert server["environment"]["PLAYHALL_REDIS_URL"] == "redis://redis:6379/0"
    assert re.fullmatch(r"haproxy:\d+\.\d+", balancer["image"])  # the official image
    assert "./haproxy:/usr/local/etc/haproxy:ro" in balancer["volumes"]
    assert "${PLAYHALL_PUBLISH:-127.0.0.1:8765}:8765" in balancer["ports"]
    assert all(str(p).startswith(("127.0.0.1:", "${PLAYHALL_PUBLISH")) for p in balancer["ports"])
    assert redis["command"][redis["command"].index("--appendonly") + 1] == "yes"
    assert any(str(v).endswith(":/data") for v in redis["volumes"])
    # The grace period covers the drain.
    drain = int(server["environment"]["PLAYHALL_DRAIN_TIMEOUT"])
    assert int(server["stop_grace_period"].rstrip("s")) >= drain + 15


def test_haproxy_checks_its_own_file() -> None:
    check = subprocess.run([haproxy_executable(), "-c", "-f", str(HAPROXY_CFG)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "Configuration file is valid" in check.stdout + check.stderr


def test_haproxy_balances_round_robin_without_stickiness_on_healthz() -> None:
    sections = _haproxy_sections()
    backend = sections["backend playhall"]
    assert "balance roundrobin" in backend
    every = " ".join(line for lines in sections.values() for line in lines)
    for sticky in ("cookie", "stick-table", "stick on", "balance source", "balance uri",
                   "hash-type"):
        assert sticky not in every, sticky
    assert "option httpchk" in backend
    assert any(re.fullmatch(r"http-check send meth GET uri /healthz\b.*", line)
               for line in backend)
    assert "http-check expect status 200" in backend
    (template,) = [line for line in backend if line.startswith("server-template")]
    name, slots, address = template.split()[1:4]
    assert int(slots) >= 3 and address == "playhall:8765"  # the compose service, its port
    assert any(line.startswith("default-server check") for line in backend)
    defaults = sections["defaults"]
    assert "mode http" in defaults  # websocket upgrades understood, not blind TCP
    assert any(line.startswith("timeout tunnel") for line in defaults)
    assert "option redispatch 1" in defaults
    assert any(line.startswith("retry-on") and "503" in line for line in defaults)
    assert "bind :8765" in sections["frontend playhall"]
    assert "option forwardfor" in sections["frontend playhall"]


def test_k8s_runs_a_deployment_of_several_replicas_with_a_drain_and_a_budget() -> None:
    objects = _k8s()
    assert ("StatefulSet", "playhall") not in objects
    deployment = objects["Deployment", "playhall"]
    spec = deployment["spec"]
    assert "replicas" not in spec  # the autoscaler's
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    # Liveness asks only that the process answers: a Redis outage (readiness 503 everywhere)
    # must not restart every replica.
    assert "tcpSocket" in container["livenessProbe"]
    pre_stop = " ".join(container["lifecycle"]["preStop"]["exec"]["command"])
    assert "kill -TERM 1" in pre_stop
    instance = {e["name"]: e for e in container["env"]}["PLAYHALL_INSTANCE"]
    assert instance["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    settings = objects["ConfigMap", "playhall-config"]["data"]
    drain = float(settings["PLAYHALL_DRAIN_TIMEOUT"])
    # The drain (rooms, then closing every socket: 5 s) inside the grace period, with room.
    assert pod["terminationGracePeriodSeconds"] >= drain + 5 + 10
    assert container["resources"]["requests"]["cpu"] in ("1", 1, "1000m")

    service = objects["Service", "playhall"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"].get("sessionAffinity", "None") == "None"

    budget = objects["PodDisruptionBudget", "playhall"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["maxUnavailable"] == 1

    scaler = objects["HorizontalPodAutoscaler", "playhall"]
    target = scaler["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "playhall")
    assert 3 <= scaler["spec"]["minReplicas"] < scaler["spec"]["maxReplicas"]
    assert scaler["spec"]["behavior"]["scaleDown"]["policies"] == [
        {"type": "Pods", "value": 1, "periodSeconds": 120}
    ]


def test_k8s_redis_is_one_primary_with_its_aof() -> None:
    objects = _k8s()
    redis = objects["StatefulSet", "playhall-redis"]
    assert redis["spec"]["replicas"] == 1
    conf = objects["ConfigMap", "playhall-redis-config"]["data"]["redis.conf"]
    assert re.search(r"^appendonly yes$", conf, re.M)
    assert re.search(r"^maxmemory-policy noeviction$", conf, re.M)
    assert "Not Redis Cluster" in (K8S / "redis.yaml").read_text()  # the choice, written down


def test_the_kustomization_lists_every_manifest() -> None:
    kustomization = _docs(K8S / "kustomization.yaml")[0]
    listed = set(kustomization["resources"])
    present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


def test_kustomize_builds_the_manifests() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl to build the kustomization with")
    built = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True,
                           timeout=60)
    assert built.returncode == 0, built.stderr
    kinds = [doc["kind"] for doc in yaml.safe_load_all(built.stdout) if doc]
    assert sorted(kinds) == sorted(kind for kind, _ in _k8s())
