package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// TestPDFLinkNotInAccessLog: a PDF link's name is the permission to read
// the PDF, so it must reach no access log on its way, with the site set
// up as the README shows: the host site (design_bridge) forwards
// /v1/files/* to content_service, and both sites log their requests. The
// host's entry and content_service's would each hold the name in the URI
// and in the answer's Content-Disposition.
func TestPDFLinkNotInAccessLog(t *testing.T) {
	const csPort = 9104
	cs := fmt.Sprintf("http://127.0.0.1:%d", csPort)
	csAccLog := filepath.Join(tmpDir, "cs-access.log")
	for _, tt := range []struct {
		name      string
		publicURL string // content_service's browser public_url
		forward   string // the host site's route to content_service
	}{
		{"at the site's root", "http://localhost:{$PORT_HTTP}",
			fmt.Sprintf("\thandle /v1/files/* {\n\t\treverse_proxy %s\n\t}", cs)},
		{"under a prefix", "http://localhost:{$PORT_HTTP}/pdf",
			fmt.Sprintf("\thandle_path /pdf/* {\n\t\treverse_proxy %s\n\t}", cs)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []string{accLog, csAccLog} {
				if err := truncate(f); err != nil {
					t.Fatal(err)
				}
			}
			csSite := fmt.Sprintf(`
:%d {
	log {
		output file %s
	}
	content_service {
		signing_key 0123456789abcdef0123456789abcdef-pdf
		app %s {
			secret %s
			token %s
		}
		browser {
			public_url %s
			files_dir %s
		}
	}
}
`, csPort, csAccLog, clientID, clientSecret, tokenEnv, tt.publicURL, filepath.Join(tmpDir, "pdf-files"))
			tc := load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken {env.DB_TEST_TOKEN}\n", cs), tt.forward)+csSite)
			checkPDFLinkNotLogged(t, tc, csAccLog)
		})
	}
}

// checkPDFLinkNotLogged renders a PDF through the host site, downloads it
// from its link and checks that neither the host's access log nor
// content_service's (csAccLog) holds the link's name.
func checkPDFLinkNotLogged(t *testing.T, tc *testcaddy.Tester, csAccLog string) {
	t.Helper()
	// The first render starts the browser.
	client := &http.Client{Timeout: time.Minute}
	res, err := client.Post(siteURL+"/v1/message/pdf", "application/json",
		strings.NewReader(`{"html":"<p>A PDF</p>","page_size":"A4","page_orientation":"portrait"}`))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Body struct {
			URL      string `json:"url"`
			Filename string `json:"filename"`
		} `json:"body"`
	}
	err = json.NewDecoder(res.Body).Decode(&answer)
	res.Body.Close()
	name := strings.TrimSuffix(answer.Body.Filename, ".pdf")
	if err != nil || res.StatusCode != http.StatusOK || len(name) != 32 || !strings.HasPrefix(answer.Body.URL, siteURL) || !strings.HasSuffix(answer.Body.URL, "/v1/files/"+answer.Body.Filename) {
		t.Fatalf("PDF export: %d %+v %v", res.StatusCode, answer, err)
	}

	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req, _ := http.NewRequest(method, answer.Body.URL, nil)
		res, err := tc.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		pdf, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || method == http.MethodGet && !bytes.HasPrefix(pdf, []byte("%PDF-")) || res.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("%s %s: %d %.20q, Referrer-Policy %q", method, answer.Body.URL, res.StatusCode, pdf, res.Header.Get("Referrer-Policy"))
		}
	}
	// Paths that only contain /v1/files/ are logged as any other: were
	// they not, a client could hide any request from the log. So is one
	// ending in a made-up link's name that another handler answers (a
	// PHP script would run with the rest as its PATH_INFO).
	probes := []string{"/v1/files/" + name + ".pdf.x", "/admin/v1/files/notes.txt",
		"/admin.php/v1/files/" + strings.Repeat("0", 32) + ".pdf"}
	for _, p := range probes {
		res, err := tc.Client.Get(siteURL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	// An export after the downloads: once both sites have logged it, they
	// have logged the downloads too (each entry is written as its request
	// ends).
	if r := post(t, tc, "/v1/message/html", testDesign(t), nil); r.Status != http.StatusOK {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}
	for _, f := range []string{accLog, csAccLog} {
		var log []byte
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if log = readFile(t, f); bytes.Contains(log, []byte(`"uri":"/v1/message/html"`)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s has no entry of the export after the downloads:\n%s", filepath.Base(f), log)
			}
		}
		if f == accLog {
			for _, p := range probes {
				if !bytes.Contains(log, []byte(`"uri":"`+p+`"`)) {
					t.Errorf("%s has no entry of %s, which is not a PDF link:\n%s", filepath.Base(f), p, log)
				}
			}
		}
		// The probe that holds the name is logged (by content_service too
		// where the host forwards it); the name must not be anywhere else.
		log = bytes.ReplaceAll(log, []byte(probes[0]), nil)
		if bytes.Contains(log, []byte(name)) {
			t.Errorf("%s holds the PDF link's name %s:\n%s", filepath.Base(f), name, log)
		}
	}
}
