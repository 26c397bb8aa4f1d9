#!/bin/sh
# Make the Redis Cluster of $NODES ("host:port host:port ...", six of them: the first three
# become the primaries, the others their replicas) once, and leave one already made alone. Then
# wait until it says cluster_state:ok. Run by deploy/compose.yaml's "cluster" profile (service
# redis-cluster-create) and by this overlay's Job, every time they start: safe to repeat.
set -eu
: "${NODES:?set NODES to the nodes, host:port separated by spaces}"
first=${NODES%% *}
host=${first%:*}
port=${first##*:}

# Every node up first (a node starting, or a name not in DNS yet, answers nothing).
for node in $NODES; do
  tries=0
  until redis-cli -h "${node%:*}" -p "${node##*:}" ping 2>/dev/null | grep -q PONG; do
    tries=$((tries + 1))
    [ "$tries" -lt 120 ] || { echo "no answer from $node" >&2; exit 1; }
    sleep 1
  done
done

# A node that knows no other has never been part of a cluster: make it. (redis-cli 7 resolves
# host names before CLUSTER MEET, which takes addresses only.)
known=$(redis-cli -h "$host" -p "$port" cluster info | tr -d '\r' |
        sed -n 's/^cluster_known_nodes://p')
if [ "${known:-0}" -le 1 ]; then
  # One argument per node: $NODES unquoted on purpose.
  # shellcheck disable=SC2086
  redis-cli --cluster create $NODES --cluster-replicas 1 --cluster-yes
else
  echo "the cluster is made already: $first knows $known nodes"
fi

tries=0
until redis-cli -h "$host" -p "$port" cluster info | grep -q '^cluster_state:ok'; do
  tries=$((tries + 1))
  [ "$tries" -lt 120 ] || { echo "the cluster is not ok after 120 s" >&2; exit 1; }
  sleep 1
done
echo "cluster_state:ok"
