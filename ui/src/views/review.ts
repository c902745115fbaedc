// Review beside a picture: pins over it where threads point, a click on it
// to comment right there, the threads with their comments, Reply and
// Resolve/Reopen, and Approve / Request changes with the review state. A
// board serves one picture host (the detail's preview, the compare view),
// which tells it where its pictures are drawn (`Surface`); pins are kept as
// fractions of the picture and placed by pins.ts, so zoom and pan move them
// with it. Boards follow others' review through the ledger's events.
import { api, on, type Proposal, type ReviewList, type Thread } from "../api";
import { render, showError, state } from "../app";
import type { Size, Zoom } from "../compared";
import { clock, personFirst } from "../format";
import { button, h } from "../h";
import { boxOnScreen, pinToScreen, placementOf, screenToPin, type Fraction, type Point } from "../pins";
import { fromWords, myDecision, resolvedWords, reviewWords, shownThreads, stepThread, type ReviewOf, type ShownThread } from "../review";

/** Where one side's pins are drawn: a layer over its picture, the
 *  picture's pixel size, and where the picture is placed in the layer
 *  (null while it is not drawn). */
export interface Surface {
  side: number;
  layer: HTMLElement;
  image: () => Size | null;
  at: () => Zoom | null;
}

/** What a board reviews: each side's picture (null: not reviewable, as
 *  your local copy), which side the decision is on, and each side's name. */
export interface Sides {
  of: (ReviewOf | null)[];
  reviewed: number;
  labels: string[];
}

/** A thread as the panel lists it, with what it says of where it is from. */
interface Listed extends ShownThread {
  where: string;
}

/** The events that change what a board shows of its file. */
const REVIEW_EVENTS = new Set(["thread.opened", "comment.added", "thread.resolved", "thread.reopened", "review.submitted", "review.requested"]);
const MOVES_THREADS = new Set(["proposal.accepted", "proposal.rebuilt"]);

/** The keys of the panel, listed where it shows them. */
export const REVIEW_KEYS = "J / K next and previous thread · R reply · E resolve or reopen";

/** The boards on screen; the newest answers the keys (the compare over the detail). */
const boards: Board[] = [];

export class Board {
  readonly panel: HTMLElement;
  private threads: Thread[] = [];
  private listed: Listed[] = [];
  private review: ReviewList | null = null;
  private surfaces: Surface[] = [];
  private current: string | null = null;
  private draft: { surface: Surface; pin: Fraction } | null = null;
  private composer: HTMLElement | null = null;
  private drafts = new Map<string, string>();
  private refreshing: Promise<void> | null = null;
  private again = false;
  private readonly list: HTMLElement;
  private readonly stateLine: HTMLElement;
  private readonly approve: HTMLButtonElement;
  private readonly changes: HTMLButtonElement;

  constructor(readonly where: "detail" | "compare", readonly artifact: string, readonly sides: Sides) {
    const id = (what: string) => `${where}-${what}`;
    this.stateLine = h("p", { class: "review-state", id: id("review-state"), role: "status" }, "");
    this.approve = button("Approve", () => void this.decide("approved"), "small", { id: id("approve") });
    this.changes = button("Request changes", () => void this.decide("changes_requested"), "small", { id: id("request-changes") });
    this.list = h("ol", { class: "threads", id: id("threads") });
    // "Review of your proposal": a label begins a sentence, this names it within one.
    const reviewed = (sides.labels[sides.reviewed] ?? "").replace(/^Your /, "your ");
    this.panel = h("section", { class: `review on-${where}`, id: id("review"), "aria-label": "Review" },
      h("div", { class: "review-decision", role: "group", "aria-label": `Review of ${reviewed}` },
        h("p", { class: "review-of muted small" }, `Review of ${reviewed}`), this.stateLine,
        h("div", { class: "actions" }, this.approve, this.changes)),
      h("h3", {}, "Comments"),
      h("p", { class: "muted small review-hint" }, sides.of.some((o) => o) ? "Click the picture to comment on a spot. " : "", REVIEW_KEYS),
      this.list);
    boards.push(this);
    void this.refresh();
  }

  /** Where the pins go now (a picture drawn anew brings new surfaces). */
  attach(surfaces: Surface[]) {
    this.surfaces = surfaces;
    this.draw();
  }

  close() {
    const at = boards.indexOf(this);
    if (at >= 0) boards.splice(at, 1);
  }

  /** Reads the file's threads and the reviewed side's decisions again;
   *  asked again while reading, it reads once more after. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        const of = this.sides.of[this.sides.reviewed];
        const [threads, review] = await Promise.all([
          api.threads(this.artifact).catch((e) => (showError(e), null)),
          of ? reviewStateOf(this.artifact, of).catch(() => null) : Promise.resolve(null),
        ]);
        if (threads) this.threads = threads;
        if (review) this.review = review;
        this.redraw();
      } while (this.again);
    })().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  /** The threads as the panel lists them: the reviewed side's (its own and
   *  earlier versions'), then the other sides' own. */
  private listedThreads(): Listed[] {
    const listed: Listed[] = [];
    const seen = new Set<string>();
    const order = [this.sides.reviewed, ...this.sides.of.map((_, i) => i).filter((i) => i !== this.sides.reviewed)];
    for (const side of order) {
      const of = this.sides.of[side];
      if (!of) continue;
      for (const shown of shownThreads(this.threads, of)) {
        if (seen.has(shown.thread.id) || (side !== this.sides.reviewed && shown.from !== null)) continue;
        seen.add(shown.thread.id);
        const where = side === this.sides.reviewed ? fromWords(shown.from) : `on ${this.sides.labels[side]}`;
        listed.push({ ...shown, where });
      }
    }
    return listed;
  }

  private redraw() {
    const me = state.overview?.me;
    this.listed = this.listedThreads();
    if (this.review) {
      this.stateLine.textContent = reviewWords(this.review, me);
      this.stateLine.dataset.state = this.review.state;
      const mine = myDecision(this.review, me);
      this.approve.setAttribute("aria-pressed", String(mine === "approved"));
      this.changes.setAttribute("aria-pressed", String(mine === "changes_requested"));
    }
    const focused = document.activeElement instanceof HTMLElement && this.list.contains(document.activeElement) ? document.activeElement.id : "";
    this.list.replaceChildren(...(this.listed.length
      ? this.listed.map((shown) => this.threadItem(shown))
      : [h("li", { class: "muted empty-threads" }, "No comments yet.")]));
    if (focused) document.getElementById(focused)?.focus();
    this.draw();
    // A thread asked for by the inbox or a notification: in sight once drawn.
    const asked = state.askedThread;
    if (asked && this.listed.some((shown) => shown.thread.id === asked)) {
      state.askedThread = null;
      this.choose(asked, true);
    }
  }

  private threadItem({ thread, where }: Listed): HTMLElement {
    const me = state.overview?.me;
    const now = Date.now();
    const replyId = `${this.where}-reply-${thread.number}`;
    const reply = h("textarea", { id: replyId, rows: "1", placeholder: "Reply…", "aria-label": `Reply in thread ${thread.number}`, "data-reply": String(thread.number) });
    reply.value = this.drafts.get(thread.id) ?? "";
    reply.addEventListener("input", () => this.drafts.set(thread.id, reply.value));
    const send = () => void this.reply(thread, reply);
    reply.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        send();
      } else if (e.key === "Escape") {
        e.stopPropagation();
        reply.blur();
      }
    });
    const resolved = thread.state === "resolved";
    const item = h("li", {
      class: `thread ${thread.state}${thread.id === this.current ? " current" : ""}${where ? " elsewhere" : ""}`,
      "data-thread": thread.id, "data-number": String(thread.number), tabindex: "-1",
    },
      h("p", { class: "thread-head" },
        h("span", { class: "thread-number" }, `#${thread.number}`),
        thread.pin ? null : h("span", { class: "muted small" }, " (no pin)"),
        where ? h("span", { class: "from" }, ` ${where}`) : null,
        resolved ? h("span", { class: "resolved-by" }, ` · ${resolvedWords(thread, me)}`) : null),
      h("ol", { class: "comments" }, ...thread.comments.map((c) =>
        h("li", { class: "comment", "data-comment": c.id },
          h("p", { class: "comment-head" }, h("strong", {}, personFirst(c.author, me)), h("span", { class: "muted small" }, ` ${clock(c.created_at, now)}`)),
          h("p", { class: "comment-body" }, c.body)))),
      h("div", { class: "reply" }, reply,
        h("div", { class: "actions" },
          button("Reply", send, "small", { "data-send-reply": String(thread.number) }),
          button(resolved ? "Reopen" : "Resolve", () => void this.resolve(thread), "small ghost", { "data-resolve": String(thread.number) }))));
    item.addEventListener("focusin", () => this.choose(thread.id, false));
    return item;
  }

  /** Draws every side's pins again where its picture is now, and the
   *  comment being written at its pin. */
  draw() {
    const layers = new Set(this.surfaces.map((s) => s.layer));
    for (const layer of layers) for (const old of layer.querySelectorAll(".pin")) old.remove();
    for (const surface of this.surfaces) {
      const of = this.sides.of[surface.side];
      const image = surface.image();
      const at = surface.at();
      if (!of || !image || !at) continue;
      for (const { thread, from } of shownThreads(this.threads, of)) {
        if (!thread.pin) continue;
        surface.layer.append(this.pinMark(thread, from, surface, image, at));
      }
    }
    if (this.draft && this.composer) {
      const { surface, pin } = this.draft;
      const image = surface.image();
      const at = surface.at();
      if (image && at) {
        const point = pinToScreen(pin, image, at);
        const mark = h("span", { class: "pin draft", "aria-hidden": "true", style: `left: ${point.x}px; top: ${point.y}px;` }, "+");
        surface.layer.append(mark);
        this.placeComposer(surface.layer, point);
      }
    }
  }

  private pinMark(thread: Thread, from: number | null, surface: Surface, image: Size, at: Zoom): HTMLElement {
    const pin = thread.pin!;
    const point = pinToScreen(pin, image, at);
    const box = boxOnScreen(pin, image, at);
    const classes = ["pin", thread.state, from === null ? "" : "earlier", thread.id === this.current ? "current" : "", box ? "box" : ""].filter(Boolean).join(" ");
    const style = box ? `left: ${point.x}px; top: ${point.y}px; width: ${box.width}px; height: ${box.height}px;` : `left: ${point.x}px; top: ${point.y}px;`;
    const mark = h("button", {
      type: "button", class: classes, style, "data-thread": thread.id, "data-number": String(thread.number), "data-side": String(surface.side),
      "aria-label": `Thread ${thread.number}${from === null ? "" : `, ${fromWords(from)}`}`,
    }, String(thread.number));
    // A pin is not the picture: pressing it neither pans nor pins.
    mark.addEventListener("pointerdown", (e) => e.stopPropagation());
    mark.addEventListener("click", (e) => {
      e.stopPropagation();
      this.choose(thread.id, true);
    });
    return mark;
  }

  /** A click on `surface` at `point` (its layer's pixels): a comment to
   *  write there, when the point is on the picture. */
  pinAt(surface: Surface, point: Point) {
    const of = this.sides.of[surface.side];
    const image = surface.image();
    const at = surface.at();
    if (!of || !image || !at) return;
    const pin = screenToPin(point, image, at);
    if (!pin) return;
    // A second click moves the comment being written, with what it says.
    const typed = this.composer?.querySelector("textarea")?.value ?? "";
    this.composer?.remove();
    this.draft = { surface, pin };
    this.composer = this.composerFor(typed);
    this.draw();
    this.composer.querySelector("textarea")!.focus();
  }

  private composerFor(typed: string): HTMLElement {
    const text = h("textarea", { id: `${this.where}-composer-text`, rows: "2", placeholder: "Comment on this spot…", "aria-label": "Comment" });
    text.value = typed;
    const send = () => void this.sendDraft(text);
    text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        send();
      } else if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        this.dropDraft();
      }
    });
    const composer = h("form", { class: "composer", id: `${this.where}-composer` }, text,
      h("div", { class: "actions" },
        button("Comment", send, "small primary", { id: `${this.where}-composer-send` }),
        button("Cancel", () => this.dropDraft(), "small ghost", { id: `${this.where}-composer-cancel` })));
    composer.addEventListener("submit", (e) => e.preventDefault());
    for (const kind of ["pointerdown", "click", "wheel"]) composer.addEventListener(kind, (e) => e.stopPropagation());
    return composer;
  }

  /** The composer beside its pin, kept within the layer. */
  private placeComposer(layer: HTMLElement, point: Point) {
    const composer = this.composer!;
    if (composer.parentElement !== layer) layer.append(composer);
    const width = composer.offsetWidth || 240;
    const left = Math.max(0, Math.min(point.x + 14, layer.clientWidth - width - 4));
    composer.style.left = `${left}px`;
    composer.style.top = `${Math.max(0, point.y + 14)}px`;
  }

  private dropDraft() {
    this.draft = null;
    this.composer?.remove();
    this.composer = null;
    this.draw();
  }

  private async sendDraft(text: HTMLTextAreaElement) {
    const draft = this.draft;
    const of = draft && this.sides.of[draft.surface.side];
    const image = draft?.surface.image();
    if (!draft || !of || !text.value.trim()) return;
    const size = image ? { width: Math.round(image.width), height: Math.round(image.height) } : null;
    try {
      const thread = await api.openThread(this.artifact, "version" in of ? of.version : null, "proposal" in of ? of.proposal : null,
        { x: draft.pin.x, y: draft.pin.y, w: null, h: null }, size, text.value);
      this.dropDraft();
      this.current = thread.id;
      await this.refresh();
    } catch (error) {
      showError(error);
    }
  }

  private async reply(thread: Thread, box: HTMLTextAreaElement) {
    if (!box.value.trim()) return;
    try {
      await api.comment(thread.id, box.value);
      this.drafts.delete(thread.id);
      box.value = "";
      this.current = thread.id;
      await this.refresh();
    } catch (error) {
      showError(error);
    }
  }

  private async resolve(thread: Thread) {
    try {
      await api.resolveThread(thread.id, thread.state === "open");
      this.current = thread.id;
      await this.refresh();
    } catch (error) {
      showError(error);
    }
  }

  private async decide(decision: "approved" | "changes_requested") {
    const of = this.sides.of[this.sides.reviewed];
    if (!of) return;
    try {
      await api.submitReview(this.artifact, "version" in of ? of.version : null, "proposal" in of ? of.proposal : null, decision, null);
      if ("proposal" in of) forgetReviewState(of.proposal);
      await this.refresh();
      render();
    } catch (error) {
      showError(error);
    }
  }

  /** Makes `thread` the current one: marked in the list and on the
   *  picture, and in sight (`focus`: the keyboard moves to it). */
  private choose(thread: string, focus: boolean) {
    if (this.current === thread && !focus) return;
    this.current = thread;
    for (const item of this.list.querySelectorAll<HTMLElement>(".thread")) item.classList.toggle("current", item.dataset.thread === thread);
    for (const layer of new Set(this.surfaces.map((s) => s.layer))) {
      for (const pin of layer.querySelectorAll<HTMLElement>(".pin[data-thread]")) pin.classList.toggle("current", pin.dataset.thread === thread);
    }
    const item = this.list.querySelector<HTMLElement>(`.thread[data-thread="${thread}"]`);
    if (focus && item) {
      item.scrollIntoView({ block: "nearest" });
      item.focus({ preventScroll: true });
    }
  }

  /** J / K (or ] / [), R and E; true when the key was the board's. */
  key(e: KeyboardEvent): boolean {
    const at = this.listed.findIndex((s) => s.thread.id === this.current);
    const key = e.key.toLowerCase();
    if (key === "j" || key === "]" || key === "k" || key === "[") {
      const next = stepThread(at < 0 ? null : at, this.listed.length, key === "j" || key === "]" ? 1 : -1);
      if (next !== null) this.choose(this.listed[next].thread.id, true);
      return true;
    }
    const current = at >= 0 ? this.listed[at].thread : null;
    if (key === "r" && current) {
      const box = document.getElementById(`${this.where}-reply-${current.number}`);
      box?.scrollIntoView({ block: "nearest" });
      box?.focus();
      return true;
    }
    if (key === "e" && current) {
      void this.resolve(current);
      return true;
    }
    return false;
  }

  /** Whether `event` changes what this board shows. */
  concerns(kind: string, artifact: string | null): boolean {
    return artifact === this.artifact && (REVIEW_EVENTS.has(kind) || MOVES_THREADS.has(kind));
  }
}

// ----- the review state of a proposal's card

/** Review states read, by proposal, for the cards; forgotten on its news. */
const proposalStates = new Map<string, ReviewList | "reading">();

function reviewStateOf(artifact: string, of: ReviewOf): Promise<ReviewList> {
  return api.reviewState(artifact, "version" in of ? of.version : null, "proposal" in of ? of.proposal : null);
}

function forgetReviewState(proposal: string) {
  proposalStates.delete(proposal);
}

/** "Approved by bob", "Changes requested by sam" on a proposal's card:
 *  read once, then again when the ledger tells of its review. */
export function proposalReviewLine(p: Proposal): HTMLElement {
  const known = proposalStates.get(p.id);
  if (known === undefined) {
    proposalStates.set(p.id, "reading");
    reviewStateOf(p.artifact_id, { proposal: p.id, base: p.base_version }).then((list) => {
      proposalStates.set(p.id, list);
      render();
    }, () => proposalStates.delete(p.id));
  }
  const list = known === undefined || known === "reading" ? null : known;
  return h("p", { class: `review-state ${list?.state ?? ""}`.trim(), "data-review-state": p.id, "data-state": list?.state ?? "" },
    list ? reviewWords(list, state.overview?.me) : "");
}

// ----- the detail's preview

/** The detail's board, for the file and head it was made for. */
let detailBoard: { key: string; board: Board; img: HTMLImageElement | null; watch: ResizeObserver | null } | null = null;

/** The review section under the detail's preview `figure` of `artifact`
 *  at head `head`: its board kept while the same head is shown, its pins
 *  drawn over the figure (none over your modified copy, which is no version). */
export function detailReview(artifact: string, head: number, figure: HTMLElement): HTMLElement {
  const key = `${artifact}/${head}`;
  if (detailBoard?.key !== key) {
    detailBoard?.board.close();
    detailBoard?.watch?.disconnect();
    const board = new Board("detail", artifact, { of: [{ version: head }], reviewed: 0, labels: [`version ${head}`] });
    detailBoard = { key, board, img: null, watch: null };
  }
  const shown = detailBoard;
  const img = figure.querySelector<HTMLImageElement>("img");
  if (img && img !== shown.img) {
    shown.watch?.disconnect();
    shown.img = img;
    let layer = figure.querySelector<HTMLElement>(".pins");
    if (!layer) {
      layer = h("div", { class: "pins" });
      figure.append(layer);
    }
    const pins = layer;
    const local = figure.classList.contains("local");
    const image = () => (img.naturalWidth > 0 ? { width: img.naturalWidth, height: img.naturalHeight } : null);
    const at = () => {
      const natural = image();
      if (!natural || !img.isConnected) return null;
      return placementOf(img.getBoundingClientRect(), pins.getBoundingClientRect(), natural);
    };
    const surface: Surface = { side: 0, layer: pins, image, at };
    shown.board.attach(local ? [] : [surface]);
    if (!local) {
      figure.classList.add("pinnable");
      img.addEventListener("click", (e) => {
        const box = pins.getBoundingClientRect();
        shown.board.pinAt(surface, { x: e.clientX - box.left, y: e.clientY - box.top });
      });
    }
    // Redrawn as the picture loads and whenever it is drawn at another size
    // (the window resized or zoomed, the detail taking the list's place).
    img.addEventListener("load", () => shown.board.draw());
    shown.watch = new ResizeObserver(() => shown.board.draw());
    shown.watch.observe(img);
  }
  return shown.board.panel;
}

// ----- keys and news

function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement;
}

/** The board the keys go to: the newest on screen. */
function activeBoard(): Board | null {
  for (let i = boards.length - 1; i >= 0; i--) {
    if (boards[i].panel.isConnected && boards[i].panel.getClientRects().length) return boards[i];
  }
  return null;
}

export function setUpReview() {
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (document.querySelector("dialog[open]")) return;
    const board = activeBoard();
    if (board?.key(e)) e.preventDefault();
  });
  // Others' comments, resolutions and decisions, as the ledger tells them.
  void on("activity", (events) => {
    const touched = new Set<Board>();
    let cards = false;
    for (const e of events) {
      for (const board of boards) if (board.concerns(e.type, e.artifact_id)) touched.add(board);
      const proposal = e.data.proposal_id;
      if (REVIEW_EVENTS.has(e.type) && typeof proposal === "string" && proposalStates.has(proposal)) {
        forgetReviewState(proposal);
        cards = true;
      }
    }
    for (const board of touched) void board.refresh();
    if (cards) render();
  });
}
