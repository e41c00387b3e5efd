package fsp

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sendBody sends a multipart upload of body to target, declaring
// declared bytes (len(body) when 0). When that is more than the body, it
// then ends its side of the connection (a client that went away before
// its body ended) and reads the answer from the half-closed connection.
// With declared -1 the body is sent chunked, its length unknown until it
// ends.
func sendBody(t *testing.T, port int, uid, target, body string, declared int) response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", livePort(port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if declared == 0 {
		declared = len(body)
	}
	go func() {
		// Written aside, so that an answer given before the body is read
		// whole is not held up by a full send buffer.
		head := fmt.Sprintf("POST /fsp%s HTTP/1.1\r\nHost: localhost\r\nX-BEE-ClientId: c1\r\nX-BEE-Uid: %s\r\n"+
			"Content-Type: multipart/form-data; boundary=XyZ\r\n", target, uid)
		if declared < 0 {
			fmt.Fprintf(conn, "%sTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", head, len(body), body)
			return
		}
		fmt.Fprintf(conn, "%sContent-Length: %d\r\n\r\n%s", head, declared, body)
		if declared > len(body) {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("POST %s: %v", target, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, raw}
}

// TestProviderDirectUploadBodies: a direct upload stores the file part
// it was sent whole, or nothing. A body that ends before the length it
// declared (the client went away mid-file) is no shorter file. The whole
// body is bounded by max_size (plus room for the form's headers and
// fields), not only its file part: a field of another name is read and
// dropped, and would otherwise keep the upload's slot for as long as it
// keeps coming. A body over the limit of request_body in front of fsp is
// the same refusal (3450, as fsp_error maps request_body's 413), wherever
// in the form the limit falls.
func TestProviderDirectUploadBodies(t *testing.T) {
	src := newSources(t)
	part := func(name, content string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"f\"\r\n\r\n" + content + "\r\n"
	}
	pdf := string(src.pdf) + strings.Repeat("%pdf padding\n", 100)
	const maxSize = 300_000
	fullPDF := string(src.pdf) + strings.Repeat("%", maxSize-len(src.pdf))
	// request_body's limit, in the site on limitedPort, and a file part
	// that brings the body to two bytes into the value of the field that
	// follows it.
	const limit, limitedPort = 20_000, brokenPort
	strategy := part("conflict_strategy", "keep")
	strategyHeader := strategy[:len(strategy)-len("keep\r\n")]
	pdfToLimit := string(src.pdf) + strings.Repeat("%", limit+2-len(part("file", string(src.pdf)))-len(strategyHeader))
	onEachBackend(t, func(t *testing.T, b backend) {
		load(t, fmt.Sprintf(`:%d {
	handle_path /fsp/* {
		fsp {
			%s
			public_url http://localhost/files
			allow_anonymous
			max_size %[3]d
		}
	}
}
:%[4]d {
	handle_path /fsp/* {
		request_body {
			max_size %[5]d
		}
		fsp {
			%[2]s
			public_url http://localhost/files
			allow_anonymous
			max_size %[3]d
		}
	}
}
`, privatePort, b.storage, maxSize, limitedPort, limit))
		for i, c := range []struct {
			name     string
			body     string
			declared int
			wantCode int
			port     int
		}{
			{"whole", part("file", pdf) + "--XyZ--\r\n", 0, 0, 0},
			{"cut short in the file", part("file", pdf)[:300], 2000, 3450, 0},
			{"a file of max_size bytes and a strategy", part("file", fullPDF) + part("conflict_strategy", "keep") + "--XyZ--\r\n", 0, 0, 0},
			{"another field past max_size", part("junk", strings.Repeat("a", maxSize+100_000)) + part("file", pdf) + "--XyZ--\r\n", 0, 3450, 0},
			{"many fields past max_size", strings.Repeat(part("note", strings.Repeat("n", 1000)), 400) + part("file", pdf) + "--XyZ--\r\n", 0, 3450, 0},
			{"request_body's limit in the file", part("file", pdf+strings.Repeat("%", limit)) + "--XyZ--\r\n", -1, 3450, limitedPort},
			{"request_body's limit in another field", part("junk", strings.Repeat("a", limit)) + part("file", pdf) + "--XyZ--\r\n", -1, 3450, limitedPort},
			{"request_body's limit in conflict_strategy", part("file", pdfToLimit) + strategy + "--XyZ--\r\n", -1, 3450, limitedPort},
			{"within request_body's limit", part("file", pdf) + strategy + "--XyZ--\r\n", -1, 0, limitedPort},
		} {
			t.Run(c.name, func(t *testing.T) {
				uid := fmt.Sprintf("b%d", i)
				res := sendBody(t, cmp.Or(c.port, privatePort), uid, "/doc.pdf", c.body, c.declared)
				stored := false
				for _, k := range b.keys(t) {
					stored = stored || strings.HasSuffix(k, "c1/"+uid+"/doc.pdf")
				}
				if c.wantCode == 0 {
					if res.Status != 200 || !stored {
						t.Errorf("answer %d %s, stored %v; want success", res.Status, res.Body, stored)
					}
					return
				}
				var got fspBody
				_ = json.Unmarshal(res.Body, &got)
				if got.Code != c.wantCode || stored {
					t.Errorf("answer %d %s, stored %v; want %d and nothing stored", res.Status, res.Body, stored, c.wantCode)
				}
			})
		}
	})
}
