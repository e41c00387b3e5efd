//go:build linux

package designtest

import (
	"syscall"
	"testing"
	"unsafe"
)

// ReadOnlyString returns s copied into memory mapped read-only, for tests
// that hold code reading a string's bytes in place (unsafe.Slice) to
// never writing them: a write faults and ends the test binary. The
// mapping is removed when the test ends, so nothing read from the string
// may outlive it.
func ReadOnlyString(t testing.TB, s string) string {
	t.Helper()
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, (len(s)+page)&^(page-1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	copy(mem, s)
	if err := syscall.Mprotect(mem, syscall.PROT_READ); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := syscall.Munmap(mem); err != nil {
			t.Error(err)
		}
	})
	return unsafe.String(&mem[0], len(s))
}
