// The pre-send checks of the Check API (POST /v1/message/check): the
// request the page sends, and the lines it lists from the answer.

// The checks the page asks for, with the service's default limits.
const CHECKS = [
  { category: "missingAltText" },
  { category: "missingImageLink" },
  { category: "missingCopyLink" },
  { category: "overageImageWeight" },
  { category: "missingDetailsEmail" },
  { category: "overageHtmlWeight" },
];

// What each check's findings are called in the list.
const TITLES = {
  missingAltText: "No alternative text",
  missingImageLink: "Image without a link",
  missingCopyLink: "No link",
  overageImageWeight: "Image over the weight limit",
  missingDetailsEmail: "Missing email detail",
  overageHtmlWeight: "HTML over the weight limit (Gmail clips long emails)",
};

/**
 * The body of a check request for a design.
 * @param {string} designText the design JSON, as text
 * @returns {string}
 */
export function checkRequestBody(designText) {
  return `{"checks":${JSON.stringify(CHECKS)},"template":${designText}}`;
}

/**
 * The lines to list from a check answer: one per finding, warnings first,
 * and one note for images whose weight could not be found.
 * @param {string} text the answer, as text
 * @returns {{level: "warning"|"suggestion"|"note", text: string}[]}
 */
export function checkItems(text) {
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    return [{ level: "note", text: "The check answer could not be read." }];
  }
  const result = Array.isArray(answer) ? answer[0] : null;
  if (!result || !Array.isArray(result.checks)) {
    return [{ level: "note", text: "The check answer could not be read." }];
  }
  const items = [];
  // The answer is the content service's: an entry of any other shape is
  // passed over rather than stop the list.
  for (const check of result.checks.filter(isObject)) {
    const title = Object.hasOwn(TITLES, check.type) ? TITLES[check.type] : String(check.type);
    for (const target of Array.isArray(check.targets) ? check.targets.filter(isObject) : []) {
      items.push({ level: check.checkStatus === "warning" ? "warning" : "suggestion", text: `${title}: ${describe(target)}` });
    }
    if (check.type === "overageImageWeight" && check.errored > 0) {
      items.push({ level: "note", text: `${check.errored} image${check.errored === 1 ? "" : "s"} could not be weighed.` });
    }
  }
  const order = { warning: 0, suggestion: 1, note: 2 };
  return items.sort((a, b) => order[a.level] - order[b.level]);
}

function isObject(v) {
  return typeof v === "object" && v !== null;
}

function describe(target) {
  if (typeof target.detailType === "string" && target.detailType) {
    return target.detailType;
  }
  if (typeof target.weight === "number" && !target.widgetType) {
    return `${target.weight} KB`;
  }
  const parts = [target.widgetType, target.widgetLabel].filter((p) => typeof p === "string" && p);
  if (typeof target.weight === "number") {
    parts.push(`(${target.weight} KB)`);
  }
  return parts.join(" ");
}
