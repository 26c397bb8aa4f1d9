"""The browser client's files, as package data: ``static/`` holds the page and its ES modules,
served by ``playhall serve`` on its own port (playhall.net.web) to any plain HTTP GET.

``static/lib/`` is the JavaScript client library (the protocol layer: codec, diffs, the
connection), usable on its own by any web client and also the npm package ``playhall-client``
(its package.json, TypeScript declarations and README are there); ``static/lib/vendor/`` holds
the pinned third-party msgpack codec with its licence. Nothing is built: the files are served
as they are.
"""
