package browser

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPreviewHostileExport: a design whose html block, without any
// script, tries to leave the previews: a refresh to another site, a link
// that fills the frame and targets the page (_top), one that opens a
// popup (_blank), and a form posted to the page's window. The previews'
// sandbox="" frames let none of them through: the page stays where it
// is, no popup opens and the other site is asked for nothing but the
// block's image (which an email may load).
func TestPreviewHostileExport(t *testing.T) {
	otherURL, hits := otherOrigin(t, func(r *http.Request) string { return r.URL.Path }, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<title>elsewhere</title>"))
	})
	count := func(path string) int { return hits()[path] }

	block := `<p>Hostile block</p>` +
		`<meta http-equiv="refresh" content="0;url=` + otherURL + `/refresh">` +
		`<img src="` + otherURL + `/img.png" alt="" width="1" height="1">` +
		`<a id="top" href="` + otherURL + `/top" target="_top" style="position:fixed;left:0;top:0;width:100%;height:100px;background:#fcc">top</a>` +
		`<a id="blank" href="` + otherURL + `/popup" target="_blank" style="position:fixed;left:0;top:100px;width:100%;height:100px;background:#cfc">blank</a>` +
		`<form action="` + otherURL + `/form" method="post" target="_top"><input name="x" value="1">` +
		`<button style="position:fixed;left:0;top:200px;width:100%;height:100px">send</button></form>`

	loadExample(t, nil)
	// The block first, so that it sits at the top of the previews.
	starter := starterWithBlock(t, block, true)

	s := newSession(t)
	s.run(t,
		serveStarter(s, starter),
		chromedp.Navigate(siteURL+"/"),
		waitFor(`!document.querySelector("#get-html").disabled`),
	)
	if html := getDesignHTML(t, s, "Hostile block"); !strings.Contains(html, `target="_top"`) {
		t.Fatalf("the export does not hold the block as written; nothing is tested: %.300q", html)
	}
	// The image is asked for once the previews have loaded the HTML: the
	// sign that the frames rendered the block.
	for i := 0; i < 100 && count("/img.png") == 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if count("/img.png") == 0 {
		t.Fatal("the previews never loaded the block's image; nothing is tested")
	}

	// A user's clicks on the link to the page's window, the popup link
	// and the form's button, in the desktop preview (they cover its top);
	// the link to the page last, as it would take the page away.
	for _, id := range []string{"blank", "form button", "top"} {
		var where string
		s.run(t, eval(`location.href`, &where))
		if where != siteURL+"/" {
			break // reported below
		}
		var box []float64
		s.run(t,
			eval(`document.querySelector("#preview-desktop").scrollIntoView({block: "start"})`, nil),
			chromedp.Sleep(200*time.Millisecond),
			eval(`(() => {
				const frame = document.querySelector("#preview-desktop").getBoundingClientRect();
				return [frame.left, frame.top];
			})()`, &box),
		)
		// The block's three parts are fixed in the frame's top 300 px,
		// 100 px each: a click in the middle of the n-th one.
		offset := map[string]float64{"top": 50, "blank": 150, "form button": 250}[id]
		s.run(t, chromedp.MouseClickXY(box[0]+100, box[1]+offset))
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(time.Second)

	var where string
	s.run(t, eval(`location.href`, &where))
	if where != siteURL+"/" {
		t.Errorf("the page was navigated to %s", where)
	}
	for _, path := range []string{"/refresh", "/top", "/popup", "/form"} {
		if n := count(path); n != 0 {
			t.Errorf("the preview reached %s (%d times)", path, n)
		}
	}
}
