//go:build tools

// This file keeps the versions of libraries the project's packages and
// tests use pinned in go.mod while those packages are being written; it is
// never compiled into the module.
package designbridge

import (
	_ "github.com/chromedp/chromedp"
	_ "github.com/golang-jwt/jwt/v5"
	_ "golang.org/x/net/html"
)
