// A finished game, checked: once the room is over, the page fetches its game record (the `record`
// request) and checks it with the library's `verifyRecord` (WebCrypto): the secret against the
// commitment (the one this page saw before the game, when it did), the key from the seats'
// contributions (this seat's own among them, when this page sent it), every step's hash, the outcome
// against the steps. It shows a "verified" mark with what was checked and what only the server's
// engines can check (`playhall verify`), and a link to download the record as JSON.
import { verifyRecord } from "../../lib/playhall.js";
import { h } from "../ui.js";

/** `fetchRecord()`: the room's record (rejects if refused); `memo`: the room's scratch state, where
 * the controls keep the bytes sent with "ready" (`entropy`) and this keeps the commitment seen
 * before the end and the check's result, so a redraw does not check again. */
export function createVerification({ room, fetchRecord, memo }) {
  const el = h("div", { "data-testid": "verification-slot" });

  function download(record) {
    const blob = new Blob([`${JSON.stringify(record, null, 1)}\n`], { type: "application/json" });
    return h("a", {
      href: URL.createObjectURL(blob),
      download: `playhall-${room}.json`,
      "data-testid": "record-link",
      text: "Download the game record (JSON)",
    });
  }

  function show(result) {
    if (!result) {
      el.replaceChildren(h("p", { class: "small", text: "Checking the game record…" }));
      return;
    }
    const { report, record, error } = result;
    if (error) {
      el.replaceChildren(
        h(
          "section",
          { class: "panel verification", "data-testid": "verification", data: { verified: "unknown" } },
          h("p", { text: `The game record could not be checked here: ${error}` }),
          record ? download(record) : null,
        ),
      );
      return;
    }
    const mark = report.ok
      ? h("strong", { class: "verified-mark", text: "✓ verified" })
      : h("strong", { class: "unverified-mark", text: "✗ NOT verified" });
    el.replaceChildren(
      h(
        "section",
        {
          class: `panel verification ${report.ok ? "ok" : "failed"}`,
          "data-testid": "verification",
          data: { verified: report.ok ? "yes" : "no" },
          role: "status",
        },
        h(
          "p",
          {},
          mark,
          report.ok
            ? " The deal was committed before the game and the record's history is whole."
            : ` ${report.failures[0].message}`,
        ),
        h(
          "details",
          {},
          h("summary", { text: "What was checked" }),
          h(
            "ul",
            { "data-testid": "verification-checked" },
            report.checked.map((line) => h("li", { text: line })),
            report.failures.map((f) => h("li", { class: "failed", text: `Failed: ${f.message}` })),
          ),
          h("p", { class: "small", text: "Only the server's game engines can check (playhall verify):" }),
          h(
            "ul",
            { class: "small" },
            report.notChecked.map((line) => h("li", { text: line })),
          ),
        ),
        download(record),
      ),
    );
  }

  async function check(v) {
    let record = null;
    try {
      record = await fetchRecord();
      const own = v.you !== null && memo.entropy ? { seat: v.you, entropy: memo.entropy } : undefined;
      const report = await verifyRecord(record, { seenCommitment: memo.seenCommitment, own });
      return { report, record };
    } catch (err) {
      return { record, error: err.reason || err.message };
    }
  }

  return {
    el,
    draw(v) {
      if (v.status !== "finished") {
        if (v.fair) memo.seenCommitment = v.fair.commitment;
        el.replaceChildren();
        return;
      }
      if (!memo.verification) {
        memo.verification = check(v).then((result) => {
          memo.verified = result;
          show(result);
        });
      }
      show(memo.verified);
    },
  };
}
