// Links out of the page: a room's share link (one a friend on another machine can open) and
// each game's rules page, which the server serves at rules/<game id>. Every URL here is
// relative to the page's own address, so the page works under a proxy's sub-path (/play/).
import { h } from "./ui.js";

/** Host names that only ever mean the machine the browser runs on. */
const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\]|\[::ffff:127(\.\d{1,3}){3}\])$/i;

export function isLoopback(hostname) {
  return LOOPBACK.test(hostname);
}

/** Where a shared link points: the server's configured public URL (hello's `public_url`),
 * else the address this page was opened at (origin and path: a proxy's sub-path is kept). */
export function shareBase(location, publicUrl) {
  return publicUrl || `${location.origin}${location.pathname}`;
}

/** The link that opens the page straight into `room` (with its join code when private). */
export function roomLink(base, room, code) {
  const hash = `#room=${encodeURIComponent(room)}${code ? `&code=${encodeURIComponent(code)}` : ""}`;
  return `${base}${hash}`;
}

/** Why a friend on another machine cannot open the share link, or null when they can: the page
 * was opened at a loopback address and the server has no public URL. */
export function shareWarning(location, publicUrl) {
  if (publicUrl || !isLoopback(location.hostname)) return null;
  const port = location.port || (location.protocol === "https:" ? "443" : "80");
  return (
    `This link names ${location.hostname}, this computer: a friend on another machine cannot ` +
    "open it. Start the server with --host 0.0.0.0, then open this page at this computer's " +
    `LAN address (same port, ${port}); or set the server's public_url.`
  );
}

/** The warning's text with its settings as code (kept on one line). */
function withCode(text) {
  return text.split(/(--host 0\.0\.0\.0|public_url)/).map((part, i) => (i % 2 ? h("code", {}, part) : part));
}

/** The room's share link, its copy button and, when a friend cannot open it, why not. */
export function shareBox(conn, room, code, message) {
  const link = roomLink(shareBase(location, conn.publicUrl), room, code);
  const input = h("input", {
    type: "text",
    readonly: true,
    value: link,
    "data-testid": "share-link",
    "aria-label": "link to this room",
  });
  const copy = async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(link);
      message("Link copied.");
    } catch {
      if (document.execCommand) document.execCommand("copy");
    }
  };
  const warning = shareWarning(location, conn.publicUrl);
  return [
    input,
    h("button", { type: "button", on: { click: copy } }, "Copy link"),
    warning ? h("p", { class: "share-warning", "data-testid": "share-warning" }, withCode(warning)) : null,
  ];
}

/** A link to a game's rules page, opened beside the game (a new tab), never in its place. */
export function rulesLink(gameId, text = "Rules") {
  return h("a", {
    class: "rules-link",
    href: `rules/${encodeURIComponent(gameId)}`,
    target: "_blank",
    rel: "noopener",
    "data-testid": "rules-link",
    text,
  });
}
