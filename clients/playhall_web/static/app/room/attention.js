// Knowing it is your turn when the page is not in front of you: the tab's title says so, and,
// if you choose, a short beep (WebAudio) and a system notification (the Notifications API, whose
// permission is asked for only when you tick it). Both choices are off until ticked and are
// remembered by the page. Beep and notification come only while the page is hidden.
import { h } from "../ui.js";

const SOUND_KEY = "playhall.turn.sound";
const NOTIFY_KEY = "playhall.turn.notify";
const TURN_PREFIX = "▶ Your turn · ";

/** A short two-tone beep on `audio` (an AudioContext). */
function beep(audio) {
  const now = audio.currentTime;
  const gain = audio.createGain();
  gain.connect(audio.destination);
  gain.gain.setValueAtTime(0.0001, now);
  gain.gain.exponentialRampToValueAtTime(0.2, now + 0.02);
  gain.gain.exponentialRampToValueAtTime(0.0001, now + 0.35);
  const tone = audio.createOscillator();
  tone.frequency.setValueAtTime(660, now);
  tone.frequency.setValueAtTime(880, now + 0.15);
  tone.connect(gain);
  tone.start(now);
  tone.stop(now + 0.36);
}

/** `describe()`: the game's title and room, for the notification's text. */
export function createAttention({ describe }) {
  const base = document.title.startsWith(TURN_PREFIX)
    ? document.title.slice(TURN_PREFIX.length)
    : document.title;
  let myTurn = false;
  let audio = null; // made when sound is ticked (a click lets a page play sound)
  const sent = []; // what was done for each turn ("sound", "notification"): for tests
  const notifyWorks = typeof Notification === "function";

  const sound = h("input", {
    id: "turn-sound",
    type: "checkbox",
    checked: localStorage.getItem(SOUND_KEY) === "1",
    on: {
      change: (e) => {
        localStorage.setItem(SOUND_KEY, e.target.checked ? "1" : "0");
        if (e.target.checked) {
          audio = audio || new AudioContext();
          audio.resume();
          beep(audio); // what it will sound like
        }
      },
    },
  });
  const notify = h("input", {
    id: "turn-notify",
    type: "checkbox",
    checked: notifyWorks && localStorage.getItem(NOTIFY_KEY) === "1" && Notification.permission === "granted",
    disabled: !notifyWorks,
    on: {
      change: async (e) => {
        const box = e.target;
        if (!box.checked) {
          localStorage.setItem(NOTIFY_KEY, "0");
          return;
        }
        const answer =
          Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
        box.checked = answer === "granted";
        localStorage.setItem(NOTIFY_KEY, box.checked ? "1" : "0");
        note.textContent = box.checked ? "" : "Notifications are blocked for this site in the browser.";
      },
    },
  });
  const note = h("span", { class: "muted small", "aria-live": "polite" });
  const el = h(
    "fieldset",
    { class: "attention", "data-testid": "attention" },
    h("legend", { text: "When it is your turn and this tab is hidden" }),
    h("label", { for: "turn-sound" }, sound, " beep"),
    h("label", { for: "turn-notify" }, notify, " notify me"),
    note,
  );

  function alert() {
    if (!document.hidden) return;
    if (sound.checked) {
      audio = audio || new AudioContext();
      if (audio.state !== "running") audio.resume();
      beep(audio);
      sent.push("sound");
    }
    if (notify.checked && notifyWorks && Notification.permission === "granted") {
      const n = new Notification("Your turn", { body: describe(), tag: "playhall-turn" });
      n.onclick = () => window.focus();
      sent.push("notification");
    }
  }

  return {
    el,
    sent,
    /** Called with every view: the title and the alerts follow whether it is your turn. */
    update(v) {
      const now = v.status === "playing" && v.you !== null && (v.to_act || []).includes(v.you);
      if (now === myTurn) return;
      myTurn = now;
      document.title = now ? `${TURN_PREFIX}${base}` : base;
      if (now) alert();
    },
    stop() {
      document.title = base;
      if (audio) audio.close();
    },
  };
}
