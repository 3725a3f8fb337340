"""Structure of the compose file, the Kubernetes manifests and the Prometheus configs."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.deploy.files import (
    DEPLOY,
    ROOT,
    compose,
    flag,
    k8s_object,
    k8s_objects,
    load_all,
    pyproject,
    yaml_files,
)

CAUSELINE_IMAGES = {"causeline", "causeline-agent"}


def _compose_port(service: str, option: str) -> int:
    return int(flag(compose()["services"][service]["command"], option))


def _container(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]["containers"][0]


def _env(container: dict) -> dict[str, object]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def _targets(job: str) -> list[str]:
    config = load_all(DEPLOY / "prometheus" / "prometheus.yml")[0]
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    return [t for sc in jobs[job]["static_configs"] for t in sc["targets"]]


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_yaml_file_parses(path):
    """Parse every YAML file under deploy/, multi-document files included."""
    assert load_all(path), f"{path} holds no document"


def test_every_manifest_names_api_version_kind_and_name():
    """Give every Kubernetes object apiVersion, kind and metadata.name."""
    objects = k8s_objects()
    assert len(objects) >= 10
    for path, doc in objects:
        assert doc.get("apiVersion") and doc.get("kind"), path
        assert doc.get("metadata", {}).get("name"), f"{path}: {doc.get('kind')} has no name"


def test_kustomizations_list_every_manifest_once():
    """List every manifest of each folder in its kustomization.yaml; folders must exist."""
    for kustomization in DEPLOY.rglob("kustomization.yaml"):
        resources = load_all(kustomization)[0]["resources"]
        listed = [r for r in resources if r.endswith(".yaml")]
        present = sorted(p.name for p in kustomization.parent.glob("*.yaml") if p != kustomization)
        assert sorted(listed) == present, kustomization
        for base in set(resources) - set(listed):  # another kustomization, as an overlay's base
            assert (kustomization.parent / base / "kustomization.yaml").is_file(), base


def test_compose_services_and_dependencies():
    """Run migrate once after a healthy PostgreSQL 16, and the service after migrate."""
    services = compose()["services"]
    expected = {"postgres", "migrate", "service", "dashboard", "prometheus", "agent"}
    assert expected <= set(services)
    pg = services["postgres"]
    assert pg["image"].startswith("postgres:16")
    assert "pg_isready" in " ".join(pg["healthcheck"]["test"])
    assert services["migrate"]["command"][:2] == ["db", "upgrade"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert (
        services["service"]["depends_on"]["migrate"]["condition"]
        == "service_completed_successfully"
    )
    for name in ("migrate", "service"):
        url = services[name]["environment"]["CAUSELINE_DATABASE_URL"]
        assert url.startswith("postgresql+psycopg://") and "@postgres:5432/" in url


def test_compose_images_are_built_from_the_dockerfile_with_known_extras():
    """Build each causeline image from deploy/Dockerfile with extras pyproject defines."""
    extras = set(pyproject()["project"]["optional-dependencies"])
    built = {n: s for n, s in compose()["services"].items() if "build" in s}
    assert {s["image"].split(":")[0] for s in built.values()} == CAUSELINE_IMAGES
    for name, svc in built.items():
        assert svc["build"]["dockerfile"] == "deploy/Dockerfile", name
        assert (DEPLOY / svc["build"]["context"] / "pyproject.toml").exists(), name
        chosen = svc["build"]["args"]["CAUSELINE_EXTRAS"]
        assert set(filter(None, chosen.split(","))) <= extras, name
    assert built["service"]["build"]["args"]["CAUSELINE_EXTRAS"] == "all"
    assert built["agent"]["build"]["args"]["CAUSELINE_EXTRAS"] == ""
    tags = {s["image"] for s in compose()["services"].values() if "build" not in s}
    assert not {t for t in tags if t.split(":")[0] in CAUSELINE_IMAGES}, "untagged build"


def test_service_port_agrees_across_compose_k8s_and_prometheus():
    """Use one service port in compose, k8s, Prometheus, Alertmanager and the clients."""
    port = _compose_port("service", "--port")
    services = compose()["services"]
    assert f"{port}:{port}" in services["service"]["ports"]
    deployment = k8s_object("Deployment", "causeline")
    container = _container(deployment)
    assert int(flag(container["args"], "--port")) == port
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert port in ports.values()
    svc = k8s_object("Service", "causeline")["spec"]["ports"][0]
    assert svc["port"] == port
    assert ports.get(svc["targetPort"], svc["targetPort"]) == port
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations["prometheus.io/port"]) == port
    assert _targets("causeline-service") == [f"service:{port}"]
    assert urlsplit(services["agent"]["environment"]["CAUSELINE_AGENT_SERVER"]).port == port
    assert urlsplit(flag(services["dashboard"]["command"], "--api-url")).port == port
    agent_server = _env(_container(k8s_object("DaemonSet", "causeline-agent")))
    assert urlsplit(agent_server["CAUSELINE_AGENT_SERVER"]).port == port
    dash_args = _container(k8s_object("Deployment", "causeline-dashboard"))["args"]
    dash_api = flag(dash_args, "--api-url")
    assert urlsplit(dash_api).hostname == "causeline" and urlsplit(dash_api).port == port
    am = load_all(DEPLOY / "alertmanager" / "alertmanager.yml")[0]
    hooks = [w["url"] for r in am["receivers"] for w in r.get("webhook_configs", [])]
    assert f"http://service:{port}/api/v1/alertmanager/webhook" in hooks


def test_dashboard_and_agent_ports_agree():
    """Use one dashboard port and one agent metrics port everywhere."""
    services = compose()["services"]
    dash_port = _compose_port("dashboard", "--port")
    assert f"{dash_port}:{dash_port}" in services["dashboard"]["ports"]
    dash = k8s_object("Deployment", "causeline-dashboard")
    assert int(flag(_container(dash)["args"], "--port")) == dash_port
    assert _container(dash)["ports"][0]["containerPort"] == dash_port
    assert k8s_object("Service", "causeline-dashboard")["spec"]["ports"][0]["port"] == dash_port
    agent_port = _compose_port("agent", "--metrics-port")
    assert str(agent_port) in services["agent"]["expose"]
    assert services["agent"]["build"]["args"]["CAUSELINE_HEALTH_URL"].endswith(
        f":{agent_port}/healthz"
    )
    assert _targets("causeline-agent") == [f"agent:{agent_port}"]
    ds = k8s_object("DaemonSet", "causeline-agent")
    assert int(flag(_container(ds)["args"], "--metrics-port")) == agent_port
    assert _container(ds)["ports"][0]["containerPort"] == agent_port
    annotations = ds["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == agent_port
    node_port = services["node-exporter"]["expose"][0]
    assert _targets("node-exporter") == [f"node-exporter:{node_port}"]
    assert _targets("dcgm-exporter") == ["dcgm-exporter:9400"]


def test_k8s_images_are_the_images_compose_builds():
    """Run only the images the Dockerfile builds, as listed in the kustomization."""
    built = {s["image"] for s in compose()["services"].values() if "build" in s}
    kustomize = load_all(DEPLOY / "k8s" / "kustomization.yaml")[0]
    assert {i["name"] for i in kustomize["images"]} == CAUSELINE_IMAGES
    for path, doc in k8s_objects():
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            if c["image"].split(":")[0] in CAUSELINE_IMAGES:
                assert c["image"] in built, f"{path}: {c['image']}"
    agent = _container(k8s_object("DaemonSet", "causeline-agent"))
    assert agent["image"].startswith("causeline-agent:")


def test_agent_daemonset_runs_on_gpu_nodes_with_a_host_spool():
    """Select GPU nodes, tolerate their taint, use the NVIDIA runtime and a hostPath spool."""
    ds = k8s_object("DaemonSet", "causeline-agent")
    pod = ds["spec"]["template"]["spec"]
    selector = pod.get("nodeSelector", {})
    affinity = str(pod.get("affinity", {}))
    assert selector.get("nvidia.com/gpu.present") == "true" or "nvidia.com/gpu.present" in affinity
    assert any(t["key"] == "nvidia.com/gpu" for t in pod["tolerations"])
    assert pod["runtimeClassName"] == "nvidia"
    assert pod["hostPID"] is True
    container = _container(ds)
    env = _env(container)
    assert env["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert "utility" in env["NVIDIA_DRIVER_CAPABILITIES"]
    assert "nvidia.com/gpu" not in str(container.get("resources", {})), "must not take a GPU"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    spool_dir = env["CAUSELINE_AGENT_SPOOL_DIR"]
    spool = volumes[mounts[spool_dir]["name"]]
    assert spool["hostPath"]["path"] and spool["hostPath"]["type"] == "DirectoryOrCreate"
    assert not mounts[spool_dir].get("readOnly")
    for path, mount in mounts.items():
        if path != spool_dir and "hostPath" in volumes[mount["name"]]:
            assert mount.get("readOnly") is True, f"host path {path} must be read-only"
    assert isinstance(env["CAUSELINE_AGENT_TOKEN"], dict), "token must come from a Secret"


def test_service_deployment_probes_and_replicas():
    """Run two service replicas, ready on /readyz and alive on /healthz."""
    deployment = k8s_object("Deployment", "causeline")
    assert deployment["spec"]["replicas"] == 2
    container = _container(deployment)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    job = k8s_object("Job", "causeline-migrate")
    assert _container(job)["args"][:2] == ["db", "upgrade"]


def test_secret_references_resolve():
    """Take every secretKeyRef from a Secret and key the manifests define."""
    secrets = {
        (d["metadata"]["namespace"], d["metadata"]["name"]): set(d.get("stringData", {}))
        for _, d in k8s_objects()
        if d["kind"] == "Secret"
    }
    refs = 0
    for path, doc in k8s_objects():
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    refs += 1
                    keys = secrets.get((doc["metadata"]["namespace"], ref["name"]))
                    assert keys is not None and ref["key"] in keys, f"{path}: {ref}"
    assert refs >= 4


def test_hpa_scales_an_existing_deployment_on_adapter_metrics():
    """Scale a Deployment that exists on external metrics the adapter rules expose."""
    import yaml

    adapter = k8s_object("ConfigMap", "causeline-adapter-rules")
    rules = yaml.safe_load(adapter["data"]["config.yaml"])["externalRules"]
    exposed = {r["name"]["as"]: r["seriesQuery"] for r in rules}
    assert "causeline_recommended_replicas" in exposed
    hpas = [d for _, d in k8s_objects() if d["kind"] == "HorizontalPodAutoscaler"]
    assert hpas
    for hpa in hpas:
        assert hpa["apiVersion"] == "autoscaling/v2"
        ref = hpa["spec"]["scaleTargetRef"]
        target = k8s_object(ref["kind"], ref["name"])
        assert target["metadata"]["namespace"] == hpa["metadata"]["namespace"]
        names = [m["external"]["metric"]["name"] for m in hpa["spec"]["metrics"]]
        assert names and set(names) <= set(exposed), names
    served = (ROOT / "correlator" / "incidents" / "autoscale.py").read_text()
    for query in exposed.values():
        metric = query.split("{")[0]
        assert f'"{metric}"' in served, f"the service exposes no {metric}"


def test_fleet_layout_wires_agents_to_vminsert_and_causeline_to_vmselect():
    """The fleet overlay: a VictoriaMetrics cluster, agents writing in, causeline reading out."""
    overlay = load_all(DEPLOY / "k8s-fleet" / "kustomization.yaml")[0]
    patches = " ".join(p["patch"] for p in overlay["patches"])
    cluster = {
        (d["kind"], d["metadata"]["name"]): d
        for d in load_all(DEPLOY / "k8s-fleet" / "victoria-metrics-cluster.yaml")
    }
    storage = cluster[("StatefulSet", "vmstorage")]
    nodes = [f"vmstorage-{i}.vmstorage" for i in range(storage["spec"]["replicas"])]
    ports = {p["name"]: p["port"] for p in cluster[("Service", "vmstorage")]["spec"]["ports"]}
    for role in ("vminsert", "vmselect"):
        args = _container(cluster[("Deployment", role)])["args"]
        wanted = ",".join(f"{n}:{ports[role]}" for n in nodes)
        assert f"-storageNode={wanted}" in args, role
        port = cluster[("Service", role)]["spec"]["ports"][0]["port"]
        assert f"http://{role}:{port}/" in patches, role
    assert "/insert/0/prometheus/api/v1/write" in patches  # vminsert's remote write path
    assert "/select/0/prometheus" in patches  # vmselect's Prometheus API
    secret = k8s_object("Secret", "causeline")["stringData"]
    assert "key: action-secret" in patches and "action-secret" in secret
