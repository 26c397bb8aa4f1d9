"""What the fleet's stand-in buses share: a publish's answer handed to a callback, as
``Bus.publish_then`` does, made from the stand-in's own ``publish``."""

from __future__ import annotations

from typing import Any

from playhall.store.pipe import Callback, then_of


class StandInBus:
    def publish(self, channel: bytes, payload: bytes) -> Any:
        raise NotImplementedError

    def publish_then(
        self, channel: bytes, payload: bytes, then: Callback, at_once: bool = False,
        now: bool = False,
    ) -> None:
        then_of(self.publish(channel, payload), then)

    def numsub(self, channels: list[bytes]) -> Any:
        raise NotImplementedError
