// The editor page: gets an editor token, starts the editor (the vendor's SDK
// or the offline stand-in, as config.js says), keeps the latest design JSON
// and exports it as HTML or plain text through design_bridge.

import config from "./config.js";
import { htmlFromResponseText, plainTextFromResponseText } from "./htmlresult.js";
import { withAbsoluteImageURLs } from "./absolute-urls.js";
import { checkItems, checkRequestBody } from "./checks.js";

const $ = (id) => document.getElementById(id);

const ui = {
  editorError: $("editor-error"),
  editorErrorText: $("editor-error-text"),
  editorErrorDismiss: $("editor-error-dismiss"),
  getHtml: $("get-html"),
  getText: $("get-text"),
  status: $("status"),
  placeholder: $("result-placeholder"),
  htmlResult: $("html-result"),
  htmlTitle: $("html-result-title"),
  htmlText: $("result-html"),
  copy: $("copy-html"),
  download: $("download-html"),
  downloadPdf: $("download-pdf"),
  downloadImage: $("download-image"),
  pdfLink: $("pdf-link"),
  checksSummary: $("checks-summary"),
  checkList: $("check-list"),
  desktopFrame: $("preview-desktop"),
  mobileFrame: $("preview-mobile"),
  textResult: $("text-result"),
  textTitle: $("text-result-title"),
  plainText: $("result-text"),
};

// The design exactly as the editor's onChange delivered it (the vendor's SDK
// delivers a JSON string), and the last successful results.
let latestDesign = null;
let currentHtml = null;

async function main() {
  ui.getHtml.addEventListener("click", getDesignHtml);
  ui.getText.addEventListener("click", getPlainText);
  ui.copy.addEventListener("click", copyHtml);
  ui.download.addEventListener("click", downloadHtml);
  ui.downloadPdf.addEventListener("click", downloadPdf);
  ui.downloadImage.addEventListener("click", downloadImage);
  ui.editorErrorDismiss.addEventListener("click", () => {
    ui.editorError.hidden = true;
    document.getElementById("editor-title").focus();
  });

  try {
    const token = await getEditorToken();
    const initialDesign = await fetchJSON(config.starterDesigns[0].file);
    latestDesign = initialDesign;
    const Editor = await editorClass();
    const editor = new Editor(token);
    await editor.start({
      uid: token.uid ?? config.uid,
      container: "editor",
      trackChanges: true,
      onChange(json) {
        latestDesign = json;
      },
      onError(err) {
        handleEditorError(err, editor);
      },
      // Understood by the stand-in only; the vendor's SDK ignores them.
      renderPath: config.htmlPath,
      starterDesigns: config.starterDesigns,
    }, initialDesign);
    ui.getHtml.disabled = false;
    ui.getText.disabled = false;
  } catch (err) {
    document.getElementById("editor").replaceChildren();
    showEditorError(`The editor could not start: ${err.message}`);
  }
}

async function getEditorToken() {
  const response = await fetch(config.authPath, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ uid: config.uid }),
  });
  if (!response.ok) {
    const reason = errorMessage(await response.text());
    throw new Error(`no editor token (HTTP ${response.status} from ${config.authPath}).${reason}`);
  }
  return response.json();
}

async function editorClass() {
  if (config.editor === "vendor") {
    const sdk = await import(config.vendorSdkUrl);
    return sdk.default ?? sdk.BeefreeSDK;
  }
  const { StandInEditor } = await import("./standin-editor.js");
  return StandInEditor;
}

// The vendor's editor reports an expired session (code 5101) through
// onError; a new login and updateToken keep the user's work.
async function handleEditorError(err, editor) {
  if (err?.code === 5101 && typeof editor.updateToken === "function") {
    try {
      editor.updateToken(await getEditorToken());
      return;
    } catch (refreshErr) {
      err = refreshErr;
    }
  }
  const message = err?.message ?? err?.description ?? String(err);
  const details = typeof err?.details === "string" && err.details ? ` ${err.details}` : "";
  showEditorError(`Editor error: ${message}${details}`);
}

function showEditorError(message) {
  ui.editorErrorText.textContent = message;
  ui.editorError.hidden = false;
}

// The design to export, its relative image URLs (the starter designs'
// designs/img/…) resolved against this page so the email stands on its own.
function designBody() {
  const text = typeof latestDesign === "string" ? latestDesign : JSON.stringify(latestDesign);
  return withAbsoluteImageURLs(text, document.baseURI);
}

// POSTs the latest design (or body); returns the response text, or null
// after telling the user that the conversion failed (the previous result
// stays).
async function exportDesign(path, what, button, body = designBody(), read = "text") {
  let response;
  let text;
  button.disabled = true;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    });
    text = read === "blob" && response.ok ? await response.blob() : await response.text();
  } catch (err) {
    // The button is enabled again first: focus cannot land on a disabled
    // one, and would stay on <body>, where disabling it left it.
    button.disabled = false;
    announce(`${what}: the request failed.`);
    window.alert(`The conversion to ${what} failed: ${err.message}`);
    button.focus();
    return null;
  } finally {
    button.disabled = false;
  }
  if (!response.ok) {
    announce(`${what}: the conversion failed (HTTP ${response.status}).`);
    window.alert(`The conversion to ${what} failed (HTTP ${response.status}).${errorMessage(text)}`);
    button.focus();
    return null;
  }
  return text;
}

async function getDesignHtml() {
  const text = await exportDesign(config.htmlPath, "HTML", ui.getHtml);
  if (text === null) {
    return;
  }
  currentHtml = htmlFromResponseText(text);
  ui.pdfLink.hidden = true; // a PDF of the HTML shown before
  ui.htmlText.value = currentHtml;
  ui.desktopFrame.srcdoc = currentHtml;
  ui.mobileFrame.srcdoc = currentHtml;
  ui.htmlResult.hidden = false;
  ui.placeholder.hidden = true;
  ui.htmlTitle.focus();
  announce(`Design HTML ready: ${currentHtml.length.toLocaleString("en")} characters.`);
  runChecks();
}

// Lists the pre-send checks' findings for the design just exported.
async function runChecks() {
  ui.checkList.replaceChildren();
  ui.checksSummary.textContent = "Checking…";
  let text;
  try {
    const response = await fetch(config.checkPath, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: checkRequestBody(designBody()),
    });
    text = await response.text();
    if (!response.ok) {
      ui.checksSummary.textContent = `The checks failed (HTTP ${response.status}).${errorMessage(text)}`;
      return;
    }
  } catch (err) {
    ui.checksSummary.textContent = `The checks failed: ${err.message}`;
    return;
  }
  const items = checkItems(text);
  const findings = items.filter((item) => item.level !== "note").length;
  ui.checksSummary.textContent = findings === 0
    ? "No warnings."
    : `${findings} finding${findings === 1 ? "" : "s"}.`;
  ui.checkList.replaceChildren(...items.map((item) => {
    const li = document.createElement("li");
    li.className = item.level;
    li.textContent = item.text;
    return li;
  }));
}

// Asks the content service for a PDF of the current HTML and opens its
// link, which the service serves as a download; a link to another site
// is offered to open in a tab of its own.
async function downloadPdf() {
  const body = JSON.stringify({ html: currentHtml, page_size: "A4", page_orientation: "portrait" });
  const text = await exportDesign(config.pdfPath, "PDF", ui.downloadPdf, body);
  if (text === null) {
    return;
  }
  let url;
  let name;
  try {
    const answer = JSON.parse(text).body;
    url = new URL(answer.url, document.baseURI);
    name = typeof answer.filename === "string" && answer.filename ? answer.filename : "design.pdf";
  } catch {
    announce("PDF: the answer held no link.");
    return;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    announce("PDF: the answer held no web link.");
    return;
  }
  if (url.origin === location.origin) {
    // The service names the file (Content-Disposition), as the answer does.
    saveLink(url.href, name);
    announce(`Downloading ${name}.`);
    return;
  }
  // Elsewhere the browser ignores the download attribute: a server there
  // that shows the PDF rather than saving it would replace this page, and
  // the design being edited with it.
  ui.pdfLink.href = url.href;
  ui.pdfLink.textContent = `Open ${name}`;
  ui.pdfLink.hidden = false;
  ui.pdfLink.focus();
  announce(`${name} is ready: open it with the link after the buttons.`);
}

// Asks the content service for a PNG of the current HTML, 640 px wide.
async function downloadImage() {
  const body = JSON.stringify({ html: currentHtml, width: 640, file_type: "png" });
  const blob = await exportDesign(config.imagePath, "image", ui.downloadImage, body, "blob");
  if (blob === null) {
    return;
  }
  const url = URL.createObjectURL(blob);
  saveLink(url, "design.png");
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
  announce("Downloading design.png.");
}

function saveLink(href, name) {
  const link = document.createElement("a");
  link.href = href;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
}

async function getPlainText() {
  const text = await exportDesign(config.plainTextPath, "plain text", ui.getText);
  if (text === null) {
    return;
  }
  ui.plainText.value = plainTextFromResponseText(text);
  ui.textResult.hidden = false;
  ui.placeholder.hidden = true;
  ui.textTitle.focus();
  announce("Plain text ready.");
}

async function copyHtml() {
  try {
    await navigator.clipboard.writeText(currentHtml);
    announce("Copied the design HTML to the clipboard.");
  } catch (err) {
    announce(`Could not copy to the clipboard: ${err.message}`);
  }
}

function downloadHtml() {
  const blob = new Blob([currentHtml], { type: "text/html;charset=utf-8" });
  const url = URL.createObjectURL(blob);
  saveLink(url, "design.html");
  // The download has started by now; keep the URL a little longer anyway.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
  announce("Downloading design.html.");
}

function announce(message) {
  // Clearing first makes screen readers repeat an identical message.
  ui.status.textContent = "";
  requestAnimationFrame(() => { ui.status.textContent = message; });
}

// The content service's error object is {code, message, details}.
function errorMessage(text) {
  try {
    const body = JSON.parse(text);
    const parts = [body.message, body.details].filter((part) => typeof part === "string" && part);
    return parts.length ? ` ${parts.join(": ")}` : "";
  } catch {
    return "";
  }
}

async function fetchJSON(path) {
  const response = await fetch(path);
  if (!response.ok) {
    throw new Error(`could not load ${path} (HTTP ${response.status})`);
  }
  return response.json();
}

main();
