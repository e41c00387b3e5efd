// Settings of the editor page: the one place to change when moving from the
// offline stand-in editor to the vendor's real SDK.
export default {
  // Which editor to start: "stand-in" (the local editor in
  // standin-editor.js, works offline) or "vendor" (the vendor's SDK, loaded
  // from vendorSdkUrl below; needs network access and real credentials).
  editor: "stand-in",

  // ES module build of the vendor's SDK wrapper (@beefree.io/sdk); its
  // default export is the BeefreeSDK class. Used only when editor is
  // "vendor". Pin a version you have tested.
  vendorSdkUrl: "https://esm.sh/@beefree.io/sdk@9.1.1",

  // Sent to /proxy/bee-auth, where design_bridge ignores it: the uid is
  // the server's (its uid setting, e.g. the signed-in user's id), unless
  // the development opt-in insecure_caller_uid is on.
  uid: "demo-user",

  // Same-origin endpoints served by design_bridge.
  authPath: "/proxy/bee-auth",
  htmlPath: "/v1/message/html",
  plainTextPath: "/v1/message/plain-text",
  pdfPath: "/v1/message/pdf",
  imagePath: "/v1/message/image",
  checkPath: "/v1/message/check",

  // Starter designs offered by the stand-in editor (files under designs/).
  starterDesigns: [
    { file: "designs/welcome.json", name: "Welcome email" },
    { file: "designs/product-launch.json", name: "Product launch (two columns)" },
    { file: "designs/newsletter.json", name: "Monthly newsletter" },
  ],
};
