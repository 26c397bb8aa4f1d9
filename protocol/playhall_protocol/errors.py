"""Error codes. Every refusal the server sends carries one of these plus a human reason.

The codes are part of the protocol: clients branch on them, so they never change meaning.
Game engines add game-specific codes for illegal moves (documented on each game's page).
"""

# Frames and messages
BAD_FRAME = "bad_frame"  # not a msgpack map, text frame, too deep
BAD_MESSAGE = "bad_message"  # missing/ill-typed field, value out of range
UNKNOWN_TYPE = "unknown_type"  # "t" names no message the server knows
NOT_HELLO = "hello_first"  # anything before a successful hello
UNSUPPORTED_VERSION = "unsupported_version"
BAD_TOKEN = "bad_token"  # resume token unknown or wrong
BAD_HOST_TOKEN = "bad_host_token"  # host's signed token expired, forged, foreign or not taken
RATE_LIMITED = "rate_limited"  # too many messages; this one was dropped
ADDRESS_REFUSED = "address_refused"  # an operator refuses the client's address for a time

# Lobby and rooms
NO_SUCH_GAME = "no_such_game"
BAD_OPTION = "bad_option"
BAD_SEATS = "bad_seats"
NO_SUCH_ROOM = "no_such_room"
NO_SUCH_PLAYER = "no_such_player"  # profile of a player id nobody has
TOO_MANY_ROOMS = "too_many_rooms"  # create past the player's room caps
BAD_CODE = "bad_code"  # no room has this join code
TOO_MANY_TRIES = "too_many_tries"  # too many wrong join codes: wait retry_after seconds
SEAT_TAKEN = "seat_taken"
NO_SUCH_SEAT = "no_such_seat"
NOT_SEATED = "not_seated"  # the action needs a seat in this room
NOT_IN_ROOM = "not_in_room"  # not watching or seated
MUTED = "muted"  # chat from a player an operator muted in this room
NOT_CREATOR = "not_creator"
WRONG_STATUS = "wrong_status"  # e.g. ready after the game started
NOT_READY = "not_ready"  # start with empty seats
OVERLOADED = "overloaded"  # room inbox full; retry later
DRAINING = "draining"  # server is shutting down; reconnect elsewhere/later
STORE_FAILED = "store_failed"  # the change could not be stored; nothing changed

# Moves
STALE = "stale"  # move made against an old version; reply carries the current
NOT_YOUR_TURN = "not_your_turn"
ILLEGAL_MOVE = "illegal_move"
BAD_MOVE = "bad_move"
GAME_OVER = "game_over"

INTERNAL = "internal"  # a server bug; the room is unchanged

# Websocket close codes the server uses (see PROTOCOL.md).
CLOSE_RESTARTING = 1012  # server restarting: reconnect and resume
CLOSE_POLICY = 1008  # flooding or repeated protocol abuse
CLOSE_TOO_SLOW = 4000  # outbox stayed full: reconnect and resume
