"""Where Playhall keeps what in Redis: every key's name, in one place.

Keys (``p`` is the configured prefix, ``ph:`` by default), by family and the module that
writes them. ``{...}`` is a hash tag: Redis (and Redis Cluster) hashes only what is inside it,
so keys with the same tag are in one hash slot, and a script or a multi-key command may touch
only keys of one slot (``slots`` checks it under test). A room's keys and channels carry the
room's tag: its commit is one script in one slot.

=============================  ==========================================================
rooms (``store/rooms.py``): all in the room's slot ``{<id>}``
``p room:{<id>}``              hash: ``v`` = version, ``d`` = the room record (msgpack) as it
                               was at version ``c`` (its last checkpoint)
``p room:{<id>}:log``          stream: one entry per version (kind, seat, player, move, ...)
``p room:{<id>}:chat``         list: the last chat lines (msgpack), newest last
``p lease:{<id>}``             "<owner>|<fence>" with a TTL: which process owns the room
``p fence:{<id>}``             counter: each lease acquisition gets a higher fence
``p game:{<id>}``              a finished game as the players' histories keep it (msgpack);
                               its presence makes the once-only write once-only
                               (``store/results.py``)
channel ``p room:{<id>}:in``   pub/sub: requests forwarded to the room's owner (``fleet``),
                               subscribed by the process holding the lease while it holds it
the indexes rooms share, each in a slot of its own, written around a room's commit
(``RoomStore.commit``) and put right by the room's owner at each lease renewal
``p code:<code>``              room id of a private room's join code
``p active``                   set: rooms that need a server without any client (timers, bots)
``p expiry``                   sorted set: room id -> when (Unix time) to check whether the
                               unfinished room has been left alone long enough to go
                               (``store/expiry.py``)
lobby (``store/lobby.py``): all in the slot ``{lobby}``
``p {lobby}``                  hash: room id -> lobby summary (msgpack) of public rooms
``p {lobby}:<game>``           sorted set: the game's listed rooms in listing order (members
                               ``lobby.lobby_order``, all scored 0, read by lex range)
``p {lobby}:changes``          pub/sub channel, not a key: every change of the listing, as
                               the process that made it publishes it (``lobby_feed``)
players (``store/players.py``)
``p player:{<pid>}``           hash: ``name``, ``th`` (sha256 of the token secret), ``n`` (set
                               while the player has not sat, created or chatted)
``p player:{<pid>}:rooms``     set: rooms the player has a seat in
``p player:{<pid>}:made``      set: waiting rooms the player created (at most a few: pruned
                               and checked against ``waiting_rooms`` at every create)
``p player:{<pid>}:created``   counter of the player's creations this minute (expires);
                               ``...:renamed`` likewise of their renames
``p address:{<a>}:created``    counter of the rooms created from client address ``a`` this
                               minute (expires)
``p address:{<a>}:players``    counter of the players registered from ``a`` this minute
                               (expires)
``p address:{<a>}:conns``      sorted set: the greeted connections from ``a`` on every process
                               ("<instance>:<connection id>" -> when it lapses unless renewed)
``p refused:{<a>}``            client address ``a`` refused by an operator: who, why, until
                               when (msgpack), with a TTL of the time left
                               (``store/refused.py``)
``p refusals``                 counter: moved on by every refusal made or lifted, so a process
                               reads the refusals again only when they changed
join-code tries (``store/code_tries.py``)
``p tries:player:{<pid>}``,    join-code tries of a player and of an address (hashes, kept
``p tries:address:{<a>}``      by ``store.code_tries``, expire)
results (``store/results.py``; the once-only key is the room's ``p game:{<id>}``)
``p game:{<id>}:rows``         what the write decided for each player (msgpack), from its first
                               step until its last (the room's slot)
``p history:{<pid>}``          sorted set: the player's finished games by finish time (ms)
``p stats:{<pid>}``            hash: per game the player's counts and rating
``p stats:{<pid>}:holds``      hash: game -> the room whose results' write holds the rating
``p leaderboard:<game>``       sorted set: player -> mu, established ratings
``p {results}:due``,           games about to end whose results are not written yet (sorted
``p {results}:expect``         set by time, and hash of what the finished record lacks)
quick play (``store/seeks.py``): a pool's keys all in the pool's slot ``{<game>:<digest>}``
``p seek:{<pool>}``            sorted set: a pool's open quick-play tables by opening time
``p seektable:{<pool>}:<id>``  hash: a quick-play table (seats, seats claimed, ratings, bots)
``p seekclaim:{<pool>}:<pid>`` the room whose seat the player's claim in the pool holds
``p seeker:{<pid>}``           "<pool> <room>": the seat the player's seek holds
``p seek:due``                 sorted set: "<pool> <room>" -> when its bots come
fleet (``store/fleet.py``): all in the slot ``{fleet}``
``p {fleet}:<instance>``       a live server process (JSON: start time, version, draining),
                               with a TTL of ``lease_ms`` its heartbeat renews
``p {fleet}``                  set: the processes' names (those whose key expired are taken
                               out when it is read); expires with the longest-lived entry
channel ``p edge:{<instance>}`` pub/sub: a process's replies and frames for the connections
                               it holds, from the owners of their rooms (``fleet``)
channel ``p {fleet}:handover``  pub/sub: the rooms with timers or bots a draining process let
                               go, for the others to load at once (``fleet/handover.py``)
layout (``store/layout.py``)
``p layout``                   the key layout the Redis is in (``LAYOUT``); set once the keys
                               of an older layout were moved to it, at start
``p layout:lock``              held (with a TTL) by the process moving the keys
=============================  ==========================================================

A finished room's record, log, chat, fence counter and join code expire ``finished_ttl`` seconds
after its last change (a chat line said later gives the list the record's expiry); a player
and their room set ``player_ttl`` seconds after their last hello (a set made later takes the
record's expiry; the set forgets rooms that have expired whenever it is read), a player who
has not sat, created a room or chatted ``unused_player_ttl`` seconds after their last hello.
Nothing is written for a room that does not exist. An unfinished room is in ``expiry``: a
waiting room nobody views for ``waiting_ttl`` is deleted (``RoomStore.delete_room``), a game nobody
plays or views for ``abandoned_ttl`` is ended, and then expires as a finished room.
"""

from __future__ import annotations

from typing import Final

#: The key layout these names make (``p layout`` holds it once a Redis is in it; layout 1, the
#: names before hash tags, is moved to it on start by ``store.layout``).
LAYOUT: Final = 2


class Keys:
    """The names of Playhall's keys under one prefix."""

    __slots__ = ("p", "lobby", "lobby_changes", "active", "expiry", "fleet", "handover",
                 "layout")

    # A name's ``{...}`` is its hash tag: Redis (a Cluster) places a key by what is inside, so
    # the keys one script or transaction writes together carry one tag (a player's, an
    # address's, a quick-play pool's) and share a hash slot.

    def __init__(self, prefix: str) -> None:
        self.p = prefix
        self.lobby = f"{prefix}{{lobby}}"
        #: A channel (Redis keeps channels apart from keys: a game named "changes" is safe).
        self.lobby_changes = f"{prefix}{{lobby}}:changes"
        self.active = f"{prefix}active"
        self.expiry = f"{prefix}expiry"
        self.fleet = f"{prefix}{{fleet}}"
        #: A channel: the rooms a draining process let go that need a server (``fleet.handover``).
        self.handover = f"{prefix}{{fleet}}:handover"
        #: The layout these names are (``LAYOUT``), written once the keys are in it.
        self.layout = f"{prefix}layout"

    def room_key(self, room: str) -> str:
        return f"{self.p}room:{{{room}}}"

    def log_key(self, room: str) -> str:
        return f"{self.p}room:{{{room}}}:log"

    def chat_key(self, room: str) -> str:
        return f"{self.p}room:{{{room}}}:chat"

    def room_channel(self, room: str) -> str:
        return f"{self.p}room:{{{room}}}:in"

    def edge_channel(self, instance: str) -> str:
        return f"{self.p}edge:{{{instance}}}"

    def ping_channel(self, instance: str) -> str:
        return f"{self.p}ping:{{{instance}}}"

    def lease_key(self, room: str) -> str:
        return f"{self.p}lease:{{{room}}}"

    def fence_key(self, room: str) -> str:
        return f"{self.p}fence:{{{room}}}"

    def code_key(self, code: str) -> str:
        return f"{self.p}code:{code}"

    def lobby_index_key(self, game: str) -> str:
        return f"{self.p}{{lobby}}:{game}"

    def player_key(self, player: str) -> str:
        return f"{self.p}player:{{{player}}}"

    def player_rooms_key(self, player: str) -> str:
        return f"{self.p}player:{{{player}}}:rooms"

    def player_made_key(self, player: str) -> str:
        return f"{self.p}player:{{{player}}}:made"

    def connections_key(self, address: str) -> str:
        return f"{self.p}address:{{{address}}}:conns"

    def refused_key(self, address: str) -> str:
        return f"{self.p}refused:{{{address}}}"

    def refusals_key(self) -> str:
        return f"{self.p}refusals"

    def game_key(self, room: str) -> str:
        return f"{self.p}game:{{{room}}}"

    def game_rows_key(self, room: str) -> str:
        return f"{self.p}game:{{{room}}}:rows"

    def history_key(self, player: str) -> str:
        return f"{self.p}history:{{{player}}}"

    def stats_key(self, player: str) -> str:
        return f"{self.p}stats:{{{player}}}"

    def rating_holds_key(self, player: str) -> str:
        return f"{self.p}stats:{{{player}}}:holds"

    def leaderboard_key(self, game: str) -> str:
        return f"{self.p}leaderboard:{game}"

    def results_due_key(self) -> str:
        return f"{self.p}{{results}}:due"

    def results_expect_key(self) -> str:
        return f"{self.p}{{results}}:expect"

    def seek_pool_key(self, pool: str) -> str:
        return f"{self.p}seek:{{{pool}}}"

    def seek_table_key(self, pool: str, room: str) -> str:
        """A table is in its pool's slot, so a claim reads and writes them in one script."""
        return f"{self.p}seektable:{{{pool}}}:{room}"

    def seek_claim_key(self, pool: str, player: str) -> str:
        return f"{self.p}seekclaim:{{{pool}}}:{player}"

    def seeker_key(self, player: str) -> str:
        return f"{self.p}seeker:{{{player}}}"

    def seek_due_key(self) -> str:
        return f"{self.p}seek:due"

    def fleet_key(self, instance: str) -> str:
        return f"{self.p}{{fleet}}:{instance}"

    def player_counter_key(self, player: str, counter: str) -> str:
        """A windowed counter of the player's (``created``, ``renamed``)."""
        return f"{self.p}player:{{{player}}}:{counter}"

    def address_counter_key(self, address: str, counter: str) -> str:
        """A windowed counter of a client address's (``created``, ``players``)."""
        return f"{self.p}address:{{{address}}}:{counter}"


def as_bytes(value: bytes | str) -> bytes:
    """redis-py types replies as bytes-or-str; this client never decodes, so they are bytes."""
    return value if isinstance(value, bytes) else value.encode()


def as_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def scan_pattern(prefix: str) -> str:
    """A SCAN pattern for the keys that start with ``prefix`` (the characters a pattern gives
    a meaning escaped)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in prefix) + "*"
