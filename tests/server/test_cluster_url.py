"""``redis+cluster://`` (and ``rediss+cluster://``) name a Redis Cluster by its seed nodes,
anything else one Redis; a Cluster URL that cannot work is refused when the configuration is
read, saying why."""

from __future__ import annotations

import pytest

from playhall.config import Config
from playhall.store.cluster_pipe import node_url
from playhall.store.connect import parse_target


def test_a_cluster_url_names_its_seed_nodes_each_with_the_credentials_and_options() -> None:
    target = parse_target("rediss+cluster://u:p%40ss@10.0.0.1:7000,[::1]:7001/?ssl_ca_certs=ca")
    assert target.cluster
    assert target.seeds == (
        "rediss://u:p%40ss@10.0.0.1:7000?ssl_ca_certs=ca",
        "rediss://u:p%40ss@[::1]:7001?ssl_ca_certs=ca",
    )
    assert parse_target("redis+cluster://h:7000").seeds == ("redis://h:7000",)
    # A node found in the slot map is reached with the seed's scheme, credentials and options.
    assert node_url(target.seeds[0], "::2", 7005) == "rediss://u:p%40ss@[::2]:7005?ssl_ca_certs=ca"


@pytest.mark.parametrize("url", ["redis://h:6379/2", "rediss://h:6380/0", "unix:///tmp/r.sock", ""])
def test_any_other_url_is_one_redis(url: str) -> None:
    assert parse_target(url).cluster is False
    assert parse_target(url).seeds == (url,)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+cluster://", "host:port"),
        ("redis+cluster://h", "host:port"),
        ("redis+cluster://h:7000,h2", "'h2'"),
        ("redis+cluster://h:99999", "host:port"),
        ("redis+cluster://h:7000/3", "one database"),
    ],
)
def test_a_cluster_url_that_cannot_work_is_refused_at_start(url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Config.from_env({"PLAYHALL_REDIS_URL": url})
    assert Config.from_env({"PLAYHALL_REDIS_URL": "redis+cluster://h:7000/0"}).redis_url
