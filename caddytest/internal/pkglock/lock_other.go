//go:build !unix

// Package pkglock serialises runs of one caddytest package on a machine.
package pkglock

// Acquire does nothing where flock(2) is unavailable; concurrent runs of a
// package must then be avoided by hand.
func Acquire(name string) error { return nil }
