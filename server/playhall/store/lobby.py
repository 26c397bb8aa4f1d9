"""The lobby's listing in Redis: a hash of summaries by room id, and per game an index of the
rooms in listing order (a sorted set of members all scored 0, ordered by the member itself:
see ``playhall.lobby.lobby_order``, whose first character is the status rank). A room's member
is written again whenever its summary is, the variants of both ranks taken out first (the Lua
is ``scripts._LOBBY``). All of it is in one hash slot (``{lobby}``), so a page and a listing's
write are single-slot. A change of a room lists it right after its commit (``rooms``); this
module reads pages, lists a room outside a change, tells which listings Redis has otherwise
than their owners, and publishes the listing's changes on the ``{lobby}:changes`` channel (read
by ``playhall.lobby_feed``)."""

from __future__ import annotations

import heapq

import redis.asyncio as aioredis

from playhall.store import scripts
from playhall.store.keys import Keys, as_bytes, as_text
from playhall.store.pipe import CommandPipe, encode_bulk
from playhall.store.scripts import RENEW_BATCH


class LobbyStore:
    def __init__(self, client: aioredis.Redis, pipe: CommandPipe, keys: Keys) -> None:
        self.redis = client
        self.pipe = pipe
        self.keys = keys

    async def lobby_page(
        self, games: list[str], after: str, limit: int
    ) -> tuple[list[bytes], str | None]:
        """Up to ``limit`` lobby summaries of ``games`` in listing order, from just after the
        index member ``after`` ("" from the start), and the cursor of the next page (None: this
        is the last). Reads at most ``limit + 1`` index members per game and ``limit``
        summaries, however many rooms are listed."""
        low = f"({after}" if after else "-"
        pipe = self.redis.pipeline(transaction=False)
        for game in games:
            pipe.zrangebylex(self.keys.lobby_index_key(game), low, "+", 0, limit + 1)
        members = heapq.nsmallest(
            limit + 1, (as_text(m) for found in await pipe.execute() for m in found)
        )
        page, more = members[:limit], len(members) > limit
        if not page:
            return [], None
        blobs = await self.redis.hmget(self.keys.lobby, [m.rpartition(":")[2] for m in page])
        # A member without its summary (none is, but for a hand-edited Redis) is skipped.
        return [as_bytes(b) for b in blobs if b is not None], page[-1] if more else None

    async def set_listing(
        self, room: str, game: str, lease: str, summary: bytes | None, order: str
    ) -> bool:
        """List (``summary``) or unlist (None) a room whose record did not change, if this
        process still holds its lease (False if it does not: nothing was written). The lease is
        read first and the listing written after: they are in different hash slots. A process
        whose lease runs out between the two can write a stale listing; the room's owner puts
        it right at its next renewal (:meth:`drift`)."""
        k = self.keys
        held = await self.pipe.call(b"GET", k.lease_key(room).encode())
        if held is None or as_text(held) != lease:
            return False
        keys = [k.lobby, k.lobby_index_key(game)]
        mode = "set" if summary is not None else "del"
        words = [b"%d" % len(keys), *(key.encode() for key in keys)]
        words += [room.encode(), mode.encode(), summary or b"", order.encode()]
        await scripts.run(self.pipe, scripts.LIST, len(words), encode_bulk(words))
        return True

    async def drift(self, listed: list[tuple[str, str, str, bytes]]) -> set[str]:
        """Which of the ``listed`` rooms (room, game, index member, summary: b"" when the room
        is not listed) Redis lists otherwise: a summary or an index member missing or other
        than given, or a listing of a room that is not listed. Reads only, :data:`RENEW_BATCH`
        rooms per script call."""
        k = self.keys
        batches = [listed[i : i + RENEW_BATCH] for i in range(0, len(listed), RENEW_BATCH)]
        found: set[str] = set()
        for batch in batches:
            keys = [k.lobby, *(k.lobby_index_key(game) for _, game, _, _ in batch)]
            words = [b"%d" % len(keys), *(key.encode() for key in keys)]
            for room, _, member, summary in batch:
                words += [room.encode(), member.encode(), summary]
            wrong = await scripts.run(self.pipe, scripts.LISTING_DRIFT, len(words),
                                      encode_bulk(words))
            found.update(batch[position - 1][0] for position in wrong)
        return found
