"""The Playhall wire contract: message shapes, the msgpack codec, the view-diff format and the
error codes. No I/O and no game logic; the server and every client import it.

The specification a stranger can implement a client from is ``protocol/PROTOCOL.md`` in the
repository; ``vectors/`` beside this file holds test vectors for the codec and the diff format.
"""

from playhall_protocol.codec import ProtocolError, decode, encode
from playhall_protocol.diff import apply_diff, make_diff, packed_diff

#: This distribution's version (playhall-protocol), which moves with the server's.
__version__ = "0.1.0"

#: The protocol version this package speaks. A client offers the versions it speaks in ``hello``.
VERSION = 1
SUPPORTED_VERSIONS = (1,)

__all__ = [
    "__version__",
    "VERSION",
    "SUPPORTED_VERSIONS",
    "ProtocolError",
    "decode",
    "encode",
    "apply_diff",
    "make_diff",
    "packed_diff",
]
