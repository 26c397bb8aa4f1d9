"""deploy/compose.yaml, deploy/haproxy and deploy/k8s as a fleet, and their Redis Cluster
options (compose's "cluster" profile, deploy/k8s-cluster), checked as far as can be without
Docker or a cluster: the files parse (and HAProxy's own check passes, and kustomize builds the
manifests when kubectl is here), several replicas run behind a balancer with no stickiness that
checks /healthz, the drain has the time it needs, and the pieces name each other consistently.
The script that makes the Redis Cluster runs for real against six redis-servers.
(tests/server/test_balancer.py runs the HAProxy file for real.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from .balancer import SHIPPED as HAPROXY_CFG
from .balancer import haproxy_executable
from .process import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
K8S_CLUSTER = DEPLOY / "k8s-cluster"
CREATE_CLUSTER = K8S_CLUSTER / "create-cluster.sh"


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
    # The one Redis unless deploy/cluster.env says otherwise.
    assert server["environment"]["PLAYHALL_REDIS_URL"] == (
        "${PLAYHALL_REDIS_URL:-redis://redis:6379/0}")
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
    choice = (K8S / "redis.yaml").read_text()  # the choice written down, and the other one
    assert "One primary carries" in choice and "deploy/k8s-cluster" in choice


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


def _cluster_args(command: str) -> dict[str, str]:
    """``--name value`` pairs of a redis-server command line."""
    words = command.split()
    return {w[2:]: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("--")}


def test_compose_cluster_profile_runs_six_nodes_made_a_cluster_once() -> None:
    (compose,) = _docs(DEPLOY / "compose.yaml")
    services = compose["services"]
    nodes = {name: s for name, s in services.items() if name.startswith("redis-node-")}
    assert sorted(nodes) == [f"redis-node-{i}" for i in range(1, 7)]
    volumes = set()
    for name, node in nodes.items():
        assert node["profiles"] == ["cluster"]
        assert node["image"] == "redis:7"
        assert node["hostname"] == name  # what it announces to clients
        args = _cluster_args(node["command"][-1])
        assert args["cluster-enabled"] == "yes"
        assert args["appendonly"] == "yes"
        assert args["maxmemory-policy"] == "noeviction"
        assert args["cluster-require-full-coverage"] == "no"
        assert "redis-cli ping" in " ".join(node["healthcheck"]["test"])
        (volume,) = node["volumes"]
        assert volume.endswith(":/data")
        volumes.add(volume.split(":")[0])
    assert len(volumes) == 6 and volumes <= set(compose["volumes"])  # a volume each

    create = services["redis-cluster-create"]
    assert create["profiles"] == ["cluster"]
    assert create["restart"] == "no"  # one-shot
    assert create["depends_on"] == {n: {"condition": "service_healthy"} for n in nodes}
    assert create["environment"]["NODES"].split() == [f"{n}:6379" for n in nodes]
    script = create["volumes"][0].split(":")[0]
    assert (DEPLOY / script).resolve() == CREATE_CLUSTER
    assert create["command"] == ["sh", "/create-cluster.sh"]

    # The servers wait for the cluster when the profile is on, and need nothing of it when off.
    server = services["playhall"]
    assert "profiles" not in server
    assert server["depends_on"]["redis-cluster-create"] == {
        "condition": "service_completed_successfully", "required": False}
    env = dict(line.split("=", 1) for line in (DEPLOY / "cluster.env").read_text().splitlines()
               if line and not line.startswith("#"))
    url = env["PLAYHALL_REDIS_URL"]
    assert url.startswith("redis+cluster://")
    assert url.removeprefix("redis+cluster://").split(",") == [f"{n}:6379" for n in nodes]


def _k8s_cluster_file() -> dict[tuple[str, str], dict[str, Any]]:
    return {(doc["kind"], doc["metadata"]["name"]): doc
            for doc in _docs(K8S_CLUSTER / "redis-cluster.yaml")}


def test_k8s_cluster_overlay_replaces_the_single_redis_and_points_the_servers_at_six_nodes(
) -> None:
    kustomization = _docs(K8S_CLUSTER / "kustomization.yaml")[0]
    assert kustomization["resources"] == ["../k8s", "redis-cluster.yaml"]
    deleted = {(p["patch"].split("kind: ")[1].split()[0],
                p["patch"].split("name: ")[1].split()[0])
               for p in kustomization["patches"] if "$patch: delete" in p["patch"]}
    single = {key for key in _k8s() if "redis" in key[1]}
    assert deleted == single  # every object of the single Redis, and nothing else
    (url_patch,) = [p for p in kustomization["patches"] if "target" in p]
    assert url_patch["target"] == {"kind": "ConfigMap", "name": "playhall-config"}
    url = yaml.safe_load(url_patch["patch"])[0]["value"]

    objects = _k8s_cluster_file()
    nodes = objects["StatefulSet", "playhall-redis-cluster"]
    service = objects["Service", "playhall-redis-cluster"]
    assert nodes["spec"]["replicas"] == 6
    assert nodes["spec"]["serviceName"] == service["metadata"]["name"]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    assert {p["port"] for p in service["spec"]["ports"]} == {6379, 16379}  # and the bus
    names = [f"playhall-redis-cluster-{i}.playhall-redis-cluster:6379" for i in range(6)]
    assert url == "redis+cluster://" + ",".join(names)
    conf = objects["ConfigMap", "playhall-redis-cluster-config"]["data"]["redis.conf"]
    for line in ("cluster-enabled yes", "appendonly yes", "maxmemory-policy noeviction",
                 "cluster-require-full-coverage no"):
        assert re.search(rf"^{line}$", conf, re.M), line
    (container,) = nodes["spec"]["template"]["spec"]["containers"]
    assert "--cluster-announce-hostname" in container["args"]

    job = objects["Job", "playhall-redis-cluster-create"]
    (create,) = job["spec"]["template"]["spec"]["containers"]
    assert {e["name"]: e["value"] for e in create["env"]}["NODES"].split() == names
    (generated,) = kustomization["configMapGenerator"]
    assert generated["files"] == ["create-cluster.sh"]
    assert generated["options"]["disableNameSuffixHash"] is True
    volumes = job["spec"]["template"]["spec"]["volumes"]
    assert volumes[0]["configMap"]["name"] == generated["name"]

    budget = objects["PodDisruptionBudget", "playhall-redis-cluster"]
    assert budget["spec"]["maxUnavailable"] == 1
    policy = objects["NetworkPolicy", "playhall-redis-cluster"]
    ports = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
    assert ports == {6379, 16379}


def test_kustomize_builds_the_cluster_overlay() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl to build the kustomization with")
    built = subprocess.run([kubectl, "kustomize", str(K8S_CLUSTER)], capture_output=True,
                           text=True, timeout=60)
    assert built.returncode == 0, built.stderr
    docs = [doc for doc in yaml.safe_load_all(built.stdout) if doc]
    kinds = {(doc["kind"], doc["metadata"]["name"]) for doc in docs}
    base = {key for key in _k8s() if "redis" not in key[1]}
    assert kinds == base | set(_k8s_cluster_file()) | {
        ("ConfigMap", "playhall-redis-cluster-create")}
    (settings,) = [d for d in docs if d["metadata"]["name"] == "playhall-config"]
    assert settings["data"]["PLAYHALL_REDIS_URL"].startswith("redis+cluster://")


@pytest.fixture
def blank_nodes(tmp_path: Path) -> Iterator[list[int]]:
    """Six redis-servers in cluster mode that are no cluster yet: their ports."""
    if not (shutil.which("redis-server") and shutil.which("redis-cli")):
        pytest.skip("no redis-server and redis-cli")
    ports: list[int] = []
    while len(ports) < 12:  # six nodes' ports, then their cluster bus ports
        port = free_port()
        if port not in ports:
            ports.append(port)
    procs = []
    try:
        for port, bus in zip(ports[:6], ports[6:], strict=True):
            (tmp_path / str(port)).mkdir()
            procs.append(subprocess.Popen(
                ["redis-server", "--port", str(port), "--cluster-port", str(bus),
                 "--bind", "127.0.0.1",
                 "--dir", str(tmp_path / str(port)), "--cluster-enabled", "yes",
                 "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield ports[:6]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


def _run_create(ports: list[int]) -> subprocess.CompletedProcess[str]:
    # "localhost": a name, as the compose and Kubernetes files give (redis-cli resolves it).
    env = {**os.environ, "NODES": " ".join(f"localhost:{p}" for p in ports)}
    return subprocess.run(["sh", str(CREATE_CLUSTER)], env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_create_script_makes_the_cluster_once_and_leaves_it_alone_after(
        blank_nodes: list[int]) -> None:
    first = _run_create(blank_nodes)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.rstrip().endswith("cluster_state:ok")
    roles = []
    for port in blank_nodes:
        with redis.Redis(port=port) as node:
            assert "cluster_state:ok" in node.execute_command("CLUSTER", "INFO").decode()
            roles.append(node.info("replication")["role"])
    assert sorted(roles) == ["master"] * 3 + ["slave"] * 3
    with redis.Redis(port=blank_nodes[0]) as node:
        epoch = node.execute_command("CLUSTER", "INFO").decode().split(
            "cluster_current_epoch:")[1].split()[0]
    second = _run_create(blank_nodes)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "the cluster is made already" in second.stdout
    assert "--cluster create" not in second.stdout and "slots" not in second.stdout
    with redis.Redis(port=blank_nodes[0]) as node:
        info = node.execute_command("CLUSTER", "INFO").decode()
    assert f"cluster_current_epoch:{epoch}" in info  # nothing made again
