// The offline stand-in for the vendor's editor. It has the same surface the
// page uses (new StandInEditor(token); start(config, design) with container,
// trackChanges, onChange and onError; load(design); getJSON()) so the page
// runs on a fresh machine with no network: it edits the texts, links, images
// and colours of a design, renders it through the local content service and
// reports the full design JSON after every change.

import { htmlFromResponseText } from "./htmlresult.js";

const MODULE_PREFIX = "mailup-bee-newsletter-modules-";
const PREVIEW_DELAY_MS = 300;

export class StandInEditor {
  /** @param {{access_token?: string, uid?: string}} token LoginV2 body */
  constructor(token) {
    if (!token || typeof token.access_token !== "string" || token.access_token === "") {
      throw new Error("The editor needs a token from /proxy/bee-auth.");
    }
    this.token = token;
    this.design = null;
    this.config = null;
    this.previewTimer = 0;
    this.previewRequest = null;
  }

  /**
   * Builds the editor inside config.container and shows the design.
   * Extra settings the stand-in understands: renderPath (where to POST the
   * design for the preview) and starterDesigns ([{file, name}]).
   */
  async start(config, design) {
    const host = document.getElementById(config.container);
    if (!host) {
      throw new Error(`No element with id "${config.container}" to host the editor.`);
    }
    this.config = {
      trackChanges: false,
      onChange() {},
      onError() {},
      renderPath: "/v1/message/html",
      starterDesigns: [],
      ...config,
    };
    this.host = host;
    this.buildShell();
    this.load(design, { notify: false });
  }

  /** Replaces the design being edited (an object, or JSON text as onChange gives it). */
  load(design, { notify = true } = {}) {
    if (typeof design === "string") {
      try {
        design = JSON.parse(design);
      } catch (err) {
        this.reportError({ code: 0, message: `This is not a design: ${err.message}` });
        return;
      }
    }
    if (!design || typeof design !== "object" || !design.page) {
      this.reportError({ code: 0, message: "This is not a design: it has no page." });
      return;
    }
    this.design = structuredClone(design);
    this.buildFields();
    this.schedulePreview(0);
    if (notify) {
      this.notifyChange("load");
    }
  }

  /** The current design (a copy). */
  getJSON() {
    return structuredClone(this.design);
  }

  changed(description) {
    this.schedulePreview(PREVIEW_DELAY_MS);
    this.notifyChange(description);
  }

  notifyChange(description) {
    if (this.config.trackChanges) {
      // Like the vendor's SDK, hand over the design as a JSON string.
      this.config.onChange(JSON.stringify(this.design), { description });
    }
  }

  reportError(error) {
    this.config.onError(error);
  }

  buildShell() {
    const shell = el("div", { class: "standin" });
    const notice = el("p", { class: "standin-notice" });
    notice.append(
      el("strong", {}, "Offline stand-in editor."),
      " This is not the vendor's editor: it edits the texts, links, images and colours of a design and previews it through the local content service.",
    );

    const toolbar = el("div", { class: "standin-toolbar" });
    const select = el("select", { id: "standin-starter" });
    for (const starter of this.config.starterDesigns) {
      select.append(el("option", { value: starter.file }, starter.name));
    }
    const loadButton = el("button", { type: "button", id: "standin-load" }, "Load starter design");
    loadButton.addEventListener("click", () => this.loadStarter(select.value, loadButton));
    toolbar.append(el("label", { for: "standin-starter" }, "Starter design"), select, loadButton);
    if (this.config.starterDesigns.length === 0) {
      toolbar.hidden = true;
    }

    this.fields = el("form", { class: "standin-fields", id: "standin-fields", "aria-label": "Design content" });
    this.fields.addEventListener("submit", (event) => event.preventDefault());

    this.preview = el("iframe", {
      class: "standin-preview",
      id: "standin-preview",
      sandbox: "",
      title: "Live preview of the design, rendered by the content service",
      referrerpolicy: "no-referrer",
    });
    const previewPane = el("div", { class: "standin-preview-pane" },
      el("h3", { class: "standin-heading" }, "Preview"), this.preview);
    const fieldsPane = el("div", { class: "standin-fields-pane" },
      el("h3", { class: "standin-heading" }, "Content"), this.fields);

    shell.append(notice, toolbar, el("div", { class: "standin-panes" }, fieldsPane, previewPane));
    this.host.replaceChildren(shell);
  }

  async loadStarter(file, button) {
    button.disabled = true;
    try {
      const response = await fetch(file);
      if (!response.ok) {
        throw new Error(`HTTP ${response.status}`);
      }
      this.load(await response.json());
    } catch (err) {
      this.reportError({ code: 0, message: `Could not load the starter design ${file}: ${err.message}` });
    } finally {
      button.disabled = false;
      button.focus();
    }
  }

  // One fieldset for the page, one per row, one per module inside it.
  buildFields() {
    const page = this.design.page;
    const form = this.fields;
    form.replaceChildren();

    const pageSet = fieldset("Whole email");
    pageSet.append(
      colourField("page-background", "Page background", page.body?.container?.style, "background-color", () => this.changed("page background")),
      colourField("page-links", "Link colour", page.body?.content?.computedStyle, "linkColor", () => this.changed("link colour")),
    );
    form.append(pageSet);

    (page.rows ?? []).forEach((row, r) => {
      const columns = row.columns ?? [];
      const rowSet = fieldset(`Row ${r + 1}` + (columns.length > 1 ? ` (${columns.length} columns)` : ""));
      rowSet.append(colourField(`r${r}-background`, "Row background", row.content?.style, "background-color", () => this.changed("row background")));
      columns.forEach((column, c) => {
        (column.modules ?? []).forEach((module, m) => {
          const id = `r${r}c${c}m${m}`;
          const where = columns.length > 1 ? ` (column ${c + 1})` : "";
          rowSet.append(this.moduleFields(module, id, where));
        });
      });
      form.append(rowSet);
    });
  }

  moduleFields(module, id, where) {
    const kind = String(module.type ?? "").replace(MODULE_PREFIX, "");
    const d = module.descriptor ?? {};
    const set = fieldset(`${capitalise(kind || "unknown")} ${where}`.trim(), kind);
    const onChange = (what) => () => this.changed(`${kind} ${what}`);
    switch (kind) {
      case "heading":
        if (d.heading) {
          set.append(
            textField(`${id}-text`, `Heading text (${d.heading.title ?? "h1"})`, () => textOf(d.heading.text),
              (value) => { d.heading.text = withText(d.heading.text, value); }, onChange("text"), "heading-text"),
            colourField(`${id}-colour`, "Heading colour", ensure(d.heading, "style"), "color", onChange("colour")),
          );
        }
        break;
      case "paragraph":
        if (d.paragraph) {
          set.append(paragraphField(`${id}-text`, d.paragraph, onChange("text")),
            colourField(`${id}-colour`, "Text colour", ensure(d.paragraph, "style"), "color", onChange("colour")));
        }
        break;
      case "button":
        if (d.button) {
          set.append(
            textField(`${id}-label`, "Button label", () => textOf(d.button.label),
              (value) => { d.button.label = withText(d.button.label, value); }, onChange("label"), "button-label"),
            textField(`${id}-href`, "Button link (URL)", () => d.button.href ?? "",
              (value) => { d.button.href = value; }, onChange("link"), "button-href", "url"),
            colourField(`${id}-background`, "Button colour", ensure(d.button, "style"), "background-color", onChange("colour")),
            colourField(`${id}-colour`, "Button text colour", ensure(d.button, "style"), "color", onChange("text colour")),
          );
        }
        break;
      case "image":
        if (d.image) {
          set.append(
            textField(`${id}-src`, "Image source (URL)", () => d.image.src ?? "",
              (value) => { d.image.src = value; }, onChange("source"), "image-src", "url"),
            textField(`${id}-alt`, "Alternative text", () => d.image.alt ?? "",
              (value) => { d.image.alt = value; }, onChange("alt text"), "image-alt"),
            textField(`${id}-href`, "Image link (URL, optional)", () => d.image.href ?? "",
              (value) => { d.image.href = value; }, onChange("link"), "image-href", "url"),
          );
        }
        break;
      case "divider":
        if (d.divider) {
          set.append(dividerColourField(`${id}-colour`, ensure(d.divider, "style"), onChange("colour")));
        }
        break;
      default:
        set.append(el("p", { class: "standin-note" }, "This block is kept as it is; the stand-in cannot edit it."));
    }
    return set;
  }

  // Renders the design through the content service (via the bridge) and
  // shows the result in the sandboxed preview frame.
  schedulePreview(delay) {
    clearTimeout(this.previewTimer);
    this.previewTimer = setTimeout(() => this.renderPreview(), delay);
  }

  async renderPreview() {
    this.previewRequest?.abort();
    const request = new AbortController();
    this.previewRequest = request;
    this.preview.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(this.config.renderPath, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(this.design),
        signal: request.signal,
      });
      const text = await response.text();
      if (!response.ok) {
        this.reportError({ code: response.status, message: `The preview could not be rendered (HTTP ${response.status}).`, details: errorDetails(text) });
        return;
      }
      this.preview.srcdoc = htmlFromResponseText(text);
    } catch (err) {
      if (err.name !== "AbortError") {
        this.reportError({ code: 0, message: `The preview could not be rendered: ${err.message}` });
      }
    } finally {
      if (this.previewRequest === request) {
        this.preview.removeAttribute("aria-busy");
      }
    }
  }
}

// --- form fields -----------------------------------------------------------

function fieldset(legend, kind = "") {
  const set = el("fieldset", { class: "standin-set" });
  if (kind) {
    set.dataset.kind = kind;
  }
  set.append(el("legend", {}, legend));
  return set;
}

function textField(id, label, read, write, changed, name, inputType = "text") {
  const input = el("input", { id, name, type: "text", value: read(), autocomplete: "off" });
  if (inputType === "url") {
    // type="text" so relative addresses and merge tags stay allowed.
    input.setAttribute("inputmode", "url");
    input.spellcheck = false;
  }
  input.addEventListener("input", () => { write(input.value); changed(); });
  return el("div", { class: "standin-field" }, el("label", { for: id }, label), input);
}

// Paragraphs made only of <p> and <br> are edited as plain text (blank line
// = new paragraph). Others (links, emphasis…) are edited as HTML so nothing
// is lost.
function paragraphField(id, paragraph, changed) {
  const plain = isPlainParagraphs(paragraph.html ?? "");
  const area = el("textarea", {
    id, name: plain ? "paragraph-text" : "paragraph-html", rows: "4", spellcheck: plain ? "true" : "false",
  });
  area.value = plain ? paragraphsToText(paragraph.html ?? "") : (paragraph.html ?? "");
  area.addEventListener("input", () => {
    paragraph.html = plain ? textToParagraphs(area.value) : area.value;
    changed();
  });
  const label = plain ? "Paragraph text (blank line starts a new paragraph)" : "Paragraph (HTML)";
  return el("div", { class: "standin-field" }, el("label", { for: id }, label), area);
}

function colourField(id, label, style, property, changed) {
  if (!style) {
    return document.createTextNode("");
  }
  const current = String(style[property] ?? "");
  const hex = toHex(current);
  const input = el("input", { id, type: "color", value: hex ?? "#ffffff", name: property });
  const note = hex ? "" : ` (now ${current || "not set"})`;
  const labelEl = el("label", { for: id }, label + note);
  input.addEventListener("input", () => {
    style[property] = input.value;
    labelEl.textContent = label;
    changed();
  });
  return el("div", { class: "standin-field standin-colour" }, labelEl, input);
}

// A divider's colour is the last part of its border-top shorthand.
function dividerColourField(id, style, changed) {
  const border = String(style["border-top"] ?? "1px solid #dddddd");
  const parts = border.trim().split(/\s+/);
  const holder = { color: parts.length >= 3 ? parts.slice(2).join(" ") : "#dddddd" };
  return colourField(id, "Divider colour", holder, "color", () => {
    const width = parts[0] ?? "1px";
    const line = parts[1] ?? "solid";
    style["border-top"] = `${width} ${line} ${holder.color}`;
    changed();
  });
}

// --- text inside small HTML fragments ---------------------------------------

function parseFragment(html) {
  // A <template> parses without running scripts or loading anything.
  const template = document.createElement("template");
  template.innerHTML = html;
  return template;
}

/** The visible text of an HTML fragment such as a heading or button label. */
export function textOf(html) {
  return (parseFragment(String(html ?? "")).content.textContent ?? "").trim();
}

/**
 * Puts new text into an HTML fragment, keeping its markup when the text
 * sits in a single text node (e.g. <p style="…">Buy</p> or <strong>Hi</strong>).
 */
export function withText(html, text) {
  const template = parseFragment(String(html ?? ""));
  const walker = document.createTreeWalker(template.content, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.data.trim() !== "") {
      nodes.push(node);
    }
  }
  if (nodes.length === 1) {
    nodes[0].data = text;
  } else {
    template.content.replaceChildren(document.createTextNode(text));
  }
  return template.innerHTML;
}

/** Whether a paragraph can be edited as plain text without losing markup. */
export function isPlainParagraphs(html) {
  const content = parseFragment(html).content;
  return [...content.querySelectorAll("*")].every((node) => node.localName === "p" || node.localName === "br");
}

/** Paragraph HTML made of <p> and <br> as text: blank line between paragraphs. */
export function paragraphsToText(html) {
  const content = parseFragment(html).content;
  const onlyParagraphs = [...content.childNodes].every((node) =>
    node.localName === "p" || (node.nodeType === Node.TEXT_NODE && node.data.trim() === ""));
  const blocks = onlyParagraphs ? [...content.children] : [content];
  return blocks.map((block) => {
    const copy = block.cloneNode(true);
    for (const br of copy.querySelectorAll("br")) {
      br.replaceWith("\n");
    }
    return copy.textContent.trim();
  }).join("\n\n");
}

/** The reverse of paragraphsToText: escaped text in <p>, newlines as <br>. */
export function textToParagraphs(text) {
  return text.split(/\n\s*\n/).map((block) => block.trim()).filter(Boolean).map((block) => {
    const p = document.createElement("p");
    block.split("\n").forEach((line, i) => {
      if (i > 0) {
        p.append(document.createElement("br"));
      }
      p.append(line);
    });
    return p.outerHTML;
  }).join("");
}

// --- small helpers ----------------------------------------------------------

function toHex(value) {
  const v = value.trim().toLowerCase();
  if (/^#[0-9a-f]{6}$/.test(v)) {
    return v;
  }
  if (/^#[0-9a-f]{8}$/.test(v)) {
    return v.slice(0, 7);
  }
  if (/^#[0-9a-f]{3}$/.test(v)) {
    return "#" + [...v.slice(1)].map((ch) => ch + ch).join("");
  }
  return null;
}

function ensure(object, key) {
  if (typeof object[key] !== "object" || object[key] === null || Array.isArray(object[key])) {
    object[key] = {};
  }
  return object[key];
}

function capitalise(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function errorDetails(text) {
  try {
    const body = JSON.parse(text);
    return [body.message, body.details].filter((part) => typeof part === "string" && part).join(": ");
  } catch {
    return "";
  }
}

function el(name, attributes = {}, ...children) {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "value") {
      node.value = value;
    } else {
      node.setAttribute(key, value);
    }
  }
  node.append(...children);
  return node;
}
