// Command upstream is the stand-in content service for the forwarding
// benchmarks: it reads the whole request body, checks the bearer token (so a
// forwarder that forgets it is counted as failing, not as fast) and answers
// 200 with a fixed small HTML document. It does as little work as possible
// so that what the benchmark measures is the forwarder in front of it.
//
// It listens on loopback only.
package main

import (
	"crypto/subtle"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9601", "loopback address to listen on")
	token := flag.String("token", "bench-token", "bearer token the requests must carry (empty: accept any)")
	bodySize := flag.Int("html-bytes", 1024, "approximate size of the HTML answer")
	flag.Parse()

	if err := requireLoopback(*addr); err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Addr:              *addr,
		Handler:           newHandler(*token, fixedHTML(*bodySize)),
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		<-sig
		_ = srv.Close()
	}()
	log.Printf("upstream listening on %s", ln.Addr())
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// newHandler answers every POST whose bearer token matches with html.
func newHandler(token string, html []byte) http.Handler {
	want := []byte("Bearer " + token)
	length := strconv.Itoa(len(html))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body is part of the contract: a real content service
		// needs all of it, and a forwarder must deliver all of it.
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"code":4001,"message":"Unauthorized","details":""}`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(html)
	})
}

// fixedHTML builds a small, valid email-like document of about size bytes.
func fixedHTML(size int) []byte {
	const head = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>bench</title></head><body><table role="presentation" width="100%"><tr><td>`
	const tail = `</td></tr></table></body></html>`
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < size-len(tail)-len("<p>x</p>") {
		b.WriteString("<p>x</p>")
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// requireLoopback refuses any listen address that is not on loopback: the
// benchmarks never serve or send traffic beyond this machine.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("upstream: %q is not a loopback address", addr)
	}
	return nil
}
