//go:build !unix

package corpus

// lockPackage does nothing where flock(2) is unavailable; concurrent runs
// of the package must then be avoided by hand.
func lockPackage() error { return nil }
