"""Rooms: the record stored in Redis, the actor that owns a live room, views and their diffs."""
