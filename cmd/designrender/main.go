// Command designrender renders a design JSON file to email HTML (or, with
// -layout, a web page or a popup fragment; with -text, plain text), for
// trying the renderer without a server.
//
//	go run ./cmd/designrender [-text] [-layout email|page|popup] [-max-output 8MiB] [-o out.html] design.json
//
// Warnings (unknown module types, forms shown as a static preview) go to
// stderr. -max-output bounds the rendered document as content_service's
// max_output does, with the same default. Exit status: 0 success, 1 the
// file is not a renderable design (or renders past -max-output), 2 usage
// or I/O error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/dustin/go-humanize"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("designrender", flag.ContinueOnError)
	fs.SetOutput(stderr)
	text := fs.Bool("text", false, "render plain text instead of HTML")
	out := fs.String("o", "", "write the result to this file instead of stdout")
	lim := render.Limits{MaxOutput: render.DefaultMaxOutput}
	fs.Func("max-output", "largest rendered document, e.g. 8MiB or 1048576 (default 8MiB)", func(v string) error {
		n, err := humanize.ParseBytes(v)
		if err != nil || n == 0 || n > math.MaxInt32 {
			return fmt.Errorf("%q: want a size from 1 byte to 2 GiB, e.g. 8MiB", v)
		}
		lim.MaxOutput = int(n)
		return nil
	})
	fs.Func("layout", "HTML layout: email, page or popup (default email)", func(v string) error {
		l, err := render.ParseLayout(v)
		lim.Layout = l
		return err
	})
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: designrender [-text] [-layout email|page|popup] [-max-output size] [-o out] design.json   (- reads stdin)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	var data []byte
	var err error
	if name := fs.Arg(0); name == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, design.DefaultMaxBytes+1))
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		fmt.Fprintln(stderr, "designrender:", err)
		return 2
	}
	res, err := decodeAndRender(data, *text, lim)
	if err != nil {
		// The renderer refuses a block it cannot read with a PathError,
		// as Decode refuses a malformed design.
		var pe *design.PathError
		switch {
		case errors.As(err, &pe):
			fmt.Fprintln(stderr, "designrender: not a design:", pe)
		case errors.Is(err, render.ErrOutputTooLarge):
			fmt.Fprintln(stderr, "designrender:", err, "(see -max-output)")
		default:
			fmt.Fprintln(stderr, "designrender:", err)
		}
		return 1
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if *out != "" {
		if err := os.WriteFile(*out, res.Body, 0o644); err != nil {
			fmt.Fprintln(stderr, "designrender:", err)
			return 2
		}
		return 0
	}
	if _, err := stdout.Write(res.Body); err != nil {
		return 2
	}
	return 0
}

func decodeAndRender(data []byte, text bool, lim render.Limits) (*render.Output, error) {
	d, err := design.Decode(data)
	if err != nil {
		return nil, err
	}
	if text {
		return render.PlainTextWithLimits(d, lim)
	}
	return render.HTMLWithLimits(d, lim)
}
