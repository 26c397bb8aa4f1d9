"""What crosses Redis between the processes of a fleet: one message type per direction.

- :class:`Forward`, edge to owner, on the room's channel (``p room:<id>:in``): a request of a
  connection the edge holds, for a room the owner holds. It names the edge (:func:`edge_id`)
  and the connection (the edge's id for it), the player behind it, the request's kind and
  arguments as the client sent them, and ``corr``, the edge's number for the answer it waits
  for (0: it waits for none).
- a batch (:func:`pack_batch`), owner to edge, on the edge's channel
  (``p edge:<instance>``): what the owner has for that edge's connections after one pass of
  its event loop, or when a room commits (on one Redis the commit script publishes it), in the
  order the connections would have got it on one process: answers
  (:data:`REPLY`), frames of a room (:data:`FRAME`, the exact bytes the owner's room encoded
  for that connection's seat),
  "send this room's frames again" (:data:`CLEAR`, the owner's side of a snapshot after
  overflow) and "this room left me" (:data:`MOVED`, at a drain). Each batch carries the
  owner's boot name and a sequence number per edge, so the edge notices a lost batch.

Encoded with msgpack, the frames as binary: a frame crosses Redis as the bytes the client
gets. Packed by the protocol's one packer (``playhall_protocol.codec.pack``: the same bytes as
``msgpack.packb(..., use_bin_type=True)``, without a packer and its buffer made per message, one
request and one batch a forwarded move).
"""

from __future__ import annotations

from typing import Any, Final

import msgpack

from playhall_protocol.codec import pack

#: Batch items: (REPLY, corr, result, error), error = [code, reason, extra] or None;
#: (FRAME, connection, room, frame bytes); (CLEAR, connection, room); (MOVED, room).
REPLY: Final = 0
FRAME: Final = 1
CLEAR: Final = 2
MOVED: Final = 3


class Forward:
    """A connection's request, forwarded to its room's owner."""

    __slots__ = ("edge", "connection", "corr", "request", "kind", "player", "name", "address",
                 "args")

    def __init__(
        self, edge: str, connection: int, corr: int, request: int | None, kind: str,
        player: str, name: str, address: str, args: dict[str, Any],
    ) -> None:
        self.edge = edge
        self.connection = connection  # 0: no connection (an operator's or the fleet's own)
        self.corr = corr
        self.request = request  # the client's request id, for the owner's log
        self.kind = kind
        self.player = player
        self.name = name
        self.address = address
        self.args = args

    def pack(self) -> bytes:
        return pack(
            [self.edge, self.connection, self.corr, self.request, self.kind, self.player,
             self.name, self.address, self.args]
        )

    @classmethod
    def unpack(cls, data: bytes) -> Forward:
        edge, connection, corr, request, kind, player, name, address, args = msgpack.unpackb(
            data, raw=False, strict_map_key=False
        )
        return cls(edge, connection, corr, request, kind, player, name, address, args)


def pack_batch(owner: str, seq: int, items: list[Any], to: str) -> bytes:
    """An owner's batch for one edge: the owner's boot name, the edge's sequence number from
    that owner, the items in order, and the edge it is for (:func:`edge_id`: a process that
    restarted under the same name gets its channel, not its predecessor's batches)."""
    return pack([owner, seq, items, to])


def unpack_batch(data: bytes) -> tuple[str, int, list[list[Any]], str]:
    owner, seq, items, to = msgpack.unpackb(data, raw=False, strict_map_key=False)
    return owner, seq, items, to


def edge_id(instance: str, boot: str) -> str:
    """A process as an edge: its instance name (which names its channel) and a token of this
    run of it, so that connection ids of a process restarted under the same name are never
    taken for its predecessor's."""
    return f"{instance}#{boot}"


def instance_of(edge: str) -> str:
    """The instance name in an :func:`edge_id` (its channel's name)."""
    return edge.rpartition("#")[0]
