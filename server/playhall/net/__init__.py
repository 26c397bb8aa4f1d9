"""The websocket side: connections (sessions), their limits, and message dispatch."""
