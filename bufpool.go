package designbridge

// Buffers of request bodies and recorded answers are reused: at thousands
// of exports a second, a fresh body and answer buffer for each (40 KB and
// 26 KB for an ordinary design) kept the collector busy for about a
// quarter of the forwarder's CPU. Whoever still reads a buffer holds a
// reference to it (requestBody, exportAnswer); only the last one gives it
// back, since a buffer reused too early would carry one client's design or
// answer to another.

import (
	"math/bits"
	"sync"
)

// Pooled buffers come in size classes of minPooled << i bytes, so that a
// buffer taken for n bytes is never more than twice n.
const (
	minPooled  = 4 << 10
	bufClasses = 10 // up to 2 MiB: a body of spoolAbove bytes and read margin
)

var bufPools [bufClasses]sync.Pool // of *[]byte

// getBuf returns an empty slice with room for at least n bytes: bufRoom(n).
func getBuf(n int) []byte {
	i := bufClass(n)
	if i >= bufClasses {
		return make([]byte, 0, n)
	}
	if p, ok := bufPools[i].Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, minPooled<<i)
}

// bufClass is the size class of a buffer for n bytes.
func bufClass(n int) int {
	if n <= minPooled {
		return 0
	}
	return bits.Len(uint((n - 1) / minPooled))
}

// bufRoom is the capacity getBuf(n) returns: what a buffer for n bytes
// holds of memory.
func bufRoom(n int) int {
	if i := bufClass(n); i < bufClasses {
		return minPooled << i
	}
	return n
}

// putBuf gives b back for reuse; the caller and everyone it lent b to are
// done with it.
func putBuf(b []byte) {
	if poisonFreed {
		b = b[:cap(b)]
		for i := range b {
			b[i] = 0xdb
		}
	}
	if cap(b) < minPooled {
		return
	}
	i := bits.Len(uint(cap(b)/minPooled)) - 1 // the largest class b holds
	if i >= bufClasses {
		return
	}
	b = b[:0]
	bufPools[i].Put(&b)
}
