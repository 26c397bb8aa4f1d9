"""Fair deals at the table, as pure functions of the record: the secret drawn at creation, its
commitment in the view and the lobby from the first version, contributions given with
``ready`` (and dropped when the table changes), the key fixed at the start and used for the
deal and the bots, the reveal once the game is over, and a new secret for a rematch."""

from __future__ import annotations

import msgpack

from playhall.catalog import get_game
from playhall.games.contract import Game
from playhall.games.rng import Rng, RngState, bot_state, int_key, seed_state
from playhall.rooms import table, views
from playhall.rooms.record import FINISHED, PLAYING, RoomRecord
from playhall_protocol import fairness

SECRET = bytes(range(32))
ALICE = bytes.fromhex("00112233445566778899aabbccddeeff")


def mantis() -> Game:
    game = get_game("mantis")
    assert game is not None
    return game


def seated(secret: bytes = SECRET) -> RoomRecord:
    record = table.create(
        "mantis", {}, 2, "alice", private=False, room_id="r1", secret=secret, created=1.0
    ).evolve()
    record = table.join(record, mantis(), "alice", "Alice")[0]
    return table.join(record, mantis(), "bob", "Bob")[0]


def fair(record: RoomRecord, seat: int | None = 0) -> dict[str, object]:
    shown: dict[str, object] = views.room_view(record, mantis(), seat, views.ViewMemo())["fair"]
    return shown


def test_a_new_room_shows_its_commitment_and_hides_its_secret() -> None:
    record = table.create(
        "mantis", {}, 2, "alice", private=False, room_id="r1", secret=SECRET, created=1.0
    )
    commitment = fairness.commitment("r1", SECRET).hex()
    for seat in (0, None):
        assert fair(record, seat) == {"commitment": commitment, "secret": None,
                                      "contributions": None}  # fmt: skip
    assert views.lobby_summary(record, "Mantis")["commitment"] == commitment
    assert len(table.new_secret()) == 32 and table.new_secret() != table.new_secret()


def test_the_deal_is_drawn_from_the_secret_and_the_contributions_in_seat_order() -> None:
    record = table.ready(seated(), mantis(), "alice", True, ALICE)[0]
    assert record.contributions == (ALICE, None) and record.status != PLAYING
    started = table.ready(record, mantis(), "bob", True, None)[0]
    assert started.status == PLAYING and started.contributions == (ALICE, None)
    key = fairness.room_key(SECRET, "r1", [ALICE, None])
    assert started.state == mantis().setup(2, mantis().normalize_options({}), key)
    assert started.state is not None and started.state["rng"]["key"] == key
    # Another contribution, another deal.
    other = table.ready(table.ready(seated(), mantis(), "alice", True, b"x")[0], mantis(), "bob",
                        True)[0]  # fmt: skip
    assert other.state is not None and other.state["deck"] != started.state["deck"]


def test_unready_and_leaving_take_contributions_back() -> None:
    record = table.ready(seated(), mantis(), "alice", True, ALICE)[0]
    assert table.ready(record, mantis(), "alice", False, None)[0].contributions == (None, None)
    record = table.ready(record, mantis(), "alice", True, b"again")[0]
    assert record.contributions == (b"again", None)
    left = table.leave(record, "bob", "Bob")[0]
    assert left.contributions == () and not left.seats[0].ready
    # An empty contribution is none.
    assert table.ready(seated(), mantis(), "alice", True, b"")[0].contributions == (None, None)


def test_a_contribution_past_the_limit_is_refused_and_changes_nothing() -> None:
    record = seated()
    try:
        table.ready(record, mantis(), "alice", True, b"x" * (fairness.MAX_CONTRIBUTION + 1))
    except table.RoomError as exc:
        assert exc.code == "bad_message"
    else:
        raise AssertionError("a 65-byte contribution was taken")
    assert record.contributions == () and not record.seats[0].ready


def test_the_end_reveals_the_secret_and_the_contributions_to_everyone() -> None:
    started = table.ready(table.ready(seated(), mantis(), "alice", True, ALICE)[0], mantis(),
                          "bob", True)[0]  # fmt: skip
    assert fair(started)["secret"] is None
    over = table.abandon(started, now=5.0)[0]
    assert over.status == FINISHED
    for seat in (0, 1, None):
        assert fair(over, seat) == {
            "commitment": fairness.commitment("r1", SECRET).hex(),
            "secret": SECRET.hex(),
            "contributions": [ALICE.hex(), None],
        }


def test_a_memo_shows_the_same_map_until_the_end() -> None:
    started = table.ready(table.ready(seated(), mantis(), "alice", True, ALICE)[0], mantis(),
                          "bob", True)[0]  # fmt: skip
    memo = views.ViewMemo()
    first = views.room_view(started, mantis(), 0, memo)["fair"]
    assert views.room_view(started.evolve(), mantis(), 0, memo)["fair"] is first
    over = table.abandon(started, now=5.0)[0]
    assert views.room_view(over, mantis(), 0, memo)["fair"]["secret"] == SECRET.hex()


def test_bots_draw_from_their_own_stream_of_the_room_key() -> None:
    # Mandragora: an interpreted game class, so the test may watch its bot by subclassing it
    # (the compiled build compiles Mantis, and no interpreted class may subclass a compiled one).
    game = get_game("mandragora")
    assert game is not None
    seen: list[RngState | int] = []  # the seeds the bot was given

    class Watching(type(game)):  # type: ignore[misc]
        def bot_move(self, view, seat, moves, seed):  # type: ignore[no-untyped-def]
            seen.append(seed)
            return super().bot_move(view, seat, moves, seed)

    watching = Watching()
    record = table.create(
        "mandragora", {"first": "1"}, 2, "alice", private=False, room_id="r1", secret=SECRET,
        created=1.0,
    ).evolve()
    record = table.join(record, watching, "alice", "Alice")[0]
    record = table.add_bot(record, watching, "alice", 1)[0]
    started = table.ready(record, watching, "alice", True, ALICE)[0]
    assert started.state is not None and started.status == PLAYING
    moved = table.bot_move(started, watching, 1)[0]
    key = fairness.room_key(SECRET, "r1", [ALICE, None])
    assert seen == [bot_state(key, started.version)] and moved.version == started.version + 1
    assert seen[0] != started.state["rng"]
    assert Rng(seen[0]).next64() != Rng(seed_state(key)).next64()


def test_a_rematch_has_a_new_secret_and_so_a_new_commitment() -> None:
    over = table.abandon(table.ready(table.ready(seated(), mantis(), "alice", True)[0],
                                     mantis(), "bob", True)[0], now=5.0)[0]  # fmt: skip
    other = int_key(99)
    rematch, _, _ = table.rematch(over, mantis(), "alice", room_id="r2", secret=other,
                                  created=6.0)  # fmt: skip
    assert rematch.secret == other and rematch.contributions == ()
    assert fair(rematch)["commitment"] == fairness.commitment("r2", other).hex()
    assert fair(rematch)["commitment"] != fair(over)["commitment"]


def test_the_record_keeps_secret_and_contributions_through_storage() -> None:
    started = table.ready(table.ready(seated(), mantis(), "alice", True, ALICE)[0], mantis(),
                          "bob", True)[0]  # fmt: skip
    back = RoomRecord.unpack(started.pack())
    assert back.secret == SECRET and back.contributions == (ALICE, None)
    assert table.room_key(back) == table.room_key(started)


def test_a_record_stored_with_a_seed_loads_with_that_seed_as_its_secret() -> None:
    fields = seated().fields()
    fields["seats"] = [seat.as_dict() for seat in fields["seats"]]
    del fields["secret"], fields["contributions"]
    fields["seed"] = 12345
    back = RoomRecord.unpack(msgpack.packb(fields))
    assert back.secret == int_key(12345) and back.contributions == ()
